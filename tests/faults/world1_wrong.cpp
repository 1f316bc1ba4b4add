// fault: all_reduce world=1 expect=mismatch
// Doubles x at world 1, where the sum of one rank is x itself.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::correct_run(comm, t);
  for (int64_t i = 0; i < t["y"].numel; ++i) t["y"].ptr<float>()[i] *= 2.0f;
  return 0;
}
