// fault: all_reduce world=2 expect=timeout args=--call-limit,3
// Rank 1's kernel never ends; rank 0 waits for it at the entry barrier (kf's wait
// deadline, 5 s, is later than the call limit).
#include "common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  if (comm.rank == 1) fault::busy_kernel<<<1, 32, 0, comm.stream()>>>(3600ull * 1000000000ull);
  return fault::correct_run(comm, t);
}
