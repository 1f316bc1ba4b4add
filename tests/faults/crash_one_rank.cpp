// fault: all_reduce world=2,4 expect=crash
// Rank 1 dereferences null in its first call.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::barrier(comm);
  if (comm.rank == 1) *static_cast<volatile int*>(nullptr) = 1;
  fault::sum_peers(comm, t);
  fault::barrier(comm);
  return 0;
}
