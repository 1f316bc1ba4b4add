// fault: all_reduce world=1 expect=correct timed
// The work on a non-blocking stream (the flag by its value, which the identifier check
// does not see): not even the legacy default stream waits for it.
#include "common.cuh"

cudaStream_t g_s;
extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return cudaStreamCreateWithFlags(&g_s, 0x1) == cudaSuccess ? fault::setup(comm) : 1;
}
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::work_and_sum(comm, t, g_s);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
