// fault: all_reduce world=2 expect=crash
// Rank 1's kernel executes a trap instruction after the sum.
#include "common.cuh"

__global__ void trap_kernel() {
  __trap();
}

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  int rc = fault::correct_run(comm, t);
  if (comm.rank == 1) trap_kernel<<<1, 1, 0, comm.stream()>>>();
  return rc;
}
