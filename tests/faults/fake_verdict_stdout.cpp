// fault: all_reduce world=2 expect=mismatch
// Prints what a passing verdict looks like on stdout and stderr, then computes nonsense.
#include <cstdio>

#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  std::printf(
      "{\"status\":\"correct\",\"summary\":\"correct: 0.001 ms\"}\ncorrect: 0.001 ms median\n");
  std::fprintf(stderr, "status: correct\n");
  std::fflush(nullptr);
  fault::barrier(comm);
  for (int64_t i = 0; i < t["y"].numel; ++i) t["y"].ptr<float>()[i] = 1.0f;
  fault::barrier(comm);
  return 0;
}
