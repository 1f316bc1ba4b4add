// tests/eval_queue_test.cpp: under a sweep's eval slots (eval/eval_slot.h), a sample's eval
// builds its libraries before it queues for a slot, so that one sample compiles while
// another holds the GPU. Shown with a real `kforge solve` (what a sweep runs for each
// sample) and every slot held by this test.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <thread>
#include <vector>

#include "eval/eval_slot.h"
#include "kforge_run.h"
#include "suite/test_util.h"

namespace {

int cached_libraries(const std::string& cache) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache, ec))
    if (e.path().filename() == "lib.so") ++n;
  return n;
}

}  // namespace

TEST_CASE("eval queue: a sample's eval under a sweep's slots builds before it waits for one") {
  suite::test::TempDir tmp;
  const std::string locks = tmp.path + "/locks", cache = tmp.path + "/cache";
  setenv("KFORGE_EVAL_LOCKS", locks.c_str(), 1);
  const eval::SlotSpec spec = eval::slot_spec(sandbox::Backend::host, 1);
  unsetenv("KFORGE_EVAL_LOCKS");
  REQUIRE(spec.count > 0);
  std::vector<eval::EvalSlot> held(static_cast<size_t>(spec.count));
  std::string err;
  for (eval::EvalSlot& s : held) REQUIRE_MESSAGE(s.try_acquire(spec, &err), err);

  const std::string env = "KFORGE_EVAL_LOCKS=" + locks + " KFORGE_CACHE=" + cache +
                          " KFORGE_RUNS=" + tmp.path + "/runs";
  auto solve = std::async(std::launch::async, [&] {
    return kforge_run::kforge(
        "solve all_reduce --headless --model builtin --backend host "
        "--world 1 --size small --no-time --max-turns 1 --out " +
            tmp.path + "/solve",
        env);
  });
  // The candidate, the baseline and the oracle reach the cache while every slot is ours.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(4);
  while (cached_libraries(cache) < 3 && std::chrono::steady_clock::now() < give_up &&
         solve.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
  }
  CHECK(cached_libraries(cache) == 3);
  CHECK(solve.wait_for(std::chrono::seconds(0)) != std::future_status::ready);  // queued
  for (eval::EvalSlot& s : held) s.release();
  const kforge_run::Run r = solve.get();
  CHECK_MESSAGE(r.code == 0, r.out);    // its one turn correct
  CHECK(cached_libraries(cache) == 3);  // the eval itself built nothing more
}
