// tests/two_at_a_time.h: runs independent external builds two at a time. nvcc is one
// core's work and CI has two, so a test that compiles many kernels halves its wall time.
// work(i) must only run commands and keep their results: the test asserts on them after,
// on its own thread (a REQUIRE in another thread would end the process).
#pragma once

#include <atomic>
#include <cstddef>
#include <thread>

namespace kf_test {

template <class Work>
void two_at_a_time(size_t n, Work work) {
  std::atomic<size_t> next{0};
  auto loop = [&] {
    for (size_t i; (i = next++) < n;) work(i);
  };
  std::thread other(loop);
  loop();
  other.join();
}

}  // namespace kf_test
