// fault: all_reduce world=1 expect=mismatch
// Writes the right sum, then leaves a kernel on a hidden stream that overwrites y with
// zeros a little later: the check waits for the whole device, so it sees the zeros.
#include "common.cuh"

cudaStream_t g_s;
extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return cudaStreamCreateWithFlags(&g_s, 0x1) == cudaSuccess ? fault::setup(comm) : 1;
}
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  int rc = fault::correct_run(comm, t);
  cudaEvent_t e;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  cudaEventRecord(e, comm.stream());
  cudaStreamWaitEvent(g_s, e, 0);
  fault::busy_kernel<<<1, 32, 0, g_s>>>(200000);
  kf::Tensor& y = t["y"];
  cudaMemsetAsync(y.ptr<float>(), 0, y.numel * sizeof(float), g_s);
  return rc;
}
