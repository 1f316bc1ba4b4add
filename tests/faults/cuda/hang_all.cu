// fault: all_reduce world=1,2 expect=timeout args=--call-limit,3
// Every rank's kernel keeps the GPU busy for an hour: the watchdog ends the call.
#include "common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::busy_kernel<<<1, 32, 0, comm.stream()>>>(3600ull * 1000000000ull);
  return fault::correct_run(comm, t);
}
