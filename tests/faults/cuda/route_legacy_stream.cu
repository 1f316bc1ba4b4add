// fault: all_reduce world=1 expect=correct timed
// The work on the legacy default stream (a launch with no stream): comm.stream() is a
// blocking stream, so its end event waits for it anyway.
#include "common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::work_and_sum(comm, t, nullptr);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
