// fault: all_reduce world=2 expect=crash
// Rank 1 leaves the process with status 0 in its first call, its kernels queued.
#include <unistd.h>

#include "common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  int rc = fault::correct_run(comm, t);
  if (comm.rank == 1) _exit(0);
  return rc;
}
