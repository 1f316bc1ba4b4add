// fault: all_reduce world=1 expect=timeout args=--call-limit,3
// Leaves a kernel running forever on a stream of its own (a persistent kernel that
// would do the work off the clock): the device never goes idle, so the call never ends.
#include "common.cuh"

cudaStream_t g_s;
bool g_started = false;
extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return cudaStreamCreateWithFlags(&g_s, 0x1) == cudaSuccess ? fault::setup(comm) : 1;
}
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  if (!g_started) fault::busy_kernel<<<1, 32, 0, g_s>>>(3600ull * 1000000000ull);
  g_started = true;
  return fault::correct_run(comm, t);
}
