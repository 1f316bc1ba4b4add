// Fault (any problem): a type error (a kf::Tensor is not a float*), so nvcc fails.
// Verdict: compile_error, with nvcc's message pointing at this file's line.
#include <kf/kf.cuh>

__global__ void scale(float* y, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] *= 2.0f;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  float* y = t["y"];  // the error: no conversion from kf::Tensor to float*
  scale<<<1, 256, 0, comm.stream()>>>(y, t["y"].numel);
  return 0;
}
