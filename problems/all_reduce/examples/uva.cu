// A simple correct UVA candidate for all_reduce: a barrier kernel (every rank's x is
// ready), one kernel that loads x from every peer and writes the sum into y, and a second
// barrier (no peer's x is regenerated while another rank still reads it). Not optimized:
// every rank reads all of every peer's x.
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

// Before and after the copy: kf's one-block barrier kernel (<kf/signal.cuh>), slot 0 on
// entry and slot 1 on exit, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 1024 ? (b < 1 ? 1 : b) : 1024);
}

__device__ __forceinline__ float load(const float* p) {
  return *p;
}
__device__ __forceinline__ float load(const __nv_bfloat16* p) {
  return __bfloat162float(*p);
}
__device__ __forceinline__ void store(float* p, float v) {
  *p = v;
}
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) {
  *p = __float2bfloat16_rn(v);
}

template <class T>
__global__ void sum_kernel(kf::Peers<const T> x, T* y, int64_t n, int world) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (int r = 0; r < world; ++r) s += load(x[r] + i);
    store(y + i, s);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int64_t n = y.numel;
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  if (x.dtype == kf::DType::bf16)
    sum_kernel<<<blocks_for(n), 256, 0, comm.stream()>>>(
        kf::peers(comm, x.ptr<const __nv_bfloat16>()), y.ptr<__nv_bfloat16>(), n, comm.world);
  else
    sum_kernel<<<blocks_for(n), 256, 0, comm.stream()>>>(kf::peers(comm, x.ptr<const float>()),
                                                         y.ptr<float>(), n, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
