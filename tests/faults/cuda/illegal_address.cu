// fault: all_reduce world=1,2 expect=crash
// Rank 0's kernel stores through a wild pointer: an illegal address, sticky for the
// context, so the rank reports a crash and the job is aborted.
#include "common.cuh"

__global__ void wild_store(float* p) {
  *p = 1.0f;
}

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  if (comm.rank == 0) wild_store<<<1, 1, 0, comm.stream()>>>(reinterpret_cast<float*>(0x10));
  return fault::correct_run(comm, t);
}
