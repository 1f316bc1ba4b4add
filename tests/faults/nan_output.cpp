// fault: all_reduce world=2 expect=mismatch
// One NaN in an otherwise right output on rank 1.
#include <limits>

#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::correct_run(comm, t);
  if (comm.rank == 1)
    t["y"].ptr<float>()[t["y"].numel - 1] = std::numeric_limits<float>::quiet_NaN();
  return 0;
}
