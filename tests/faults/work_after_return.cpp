// fault: all_reduce world=2 expect=mismatch
// Returns at once and leaves the sum to a thread that finishes later: the outputs are
// read when kf_run returns, so they are still poison.
#include <chrono>
#include <thread>

#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::barrier(comm);
  std::thread([&comm, t]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    fault::sum_peers(comm, t);
  }).detach();
  return 0;
}
