// fault: all_reduce world=1 expect=correct timed
// The work on the per-thread default stream, named by its handle value (0x2) rather
// than by cudaStreamPerThread, which the identifier check refuses.
#include "common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::work_and_sum(comm, t, reinterpret_cast<cudaStream_t>(0x2));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
