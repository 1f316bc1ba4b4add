// fault: all_reduce world=2 expect=crash
// abort() on rank 0 after the sum (SIGABRT).
#include <cstdlib>

#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::correct_run(comm, t);
  if (comm.rank == 0) std::abort();
  return 0;
}
