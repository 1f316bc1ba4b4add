// A simple correct UVA candidate for reduce: a barrier kernel (every rank's x is ready),
// one kernel that, on the root, loads x from every peer and writes the sum into y and,
// elsewhere, copies the rank's own x into y, and a second barrier (no peer's x is
// regenerated while the root still reads it). Not optimized: the root reads all of every
// peer's x.
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

// Before and after the work: kf's one-block barrier kernel (<kf/signal.cuh>), slot 0 on
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

// terms = world on the root (sum every rank's x), 1 elsewhere (x[0] is our own x: a copy).
template <class T>
__global__ void reduce_kernel(kf::Peers<const T> x, T* y, int64_t n, int terms) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (int r = 0; r < terms; ++r) s += load(x[r] + i);
    store(y + i, s);
  }
}

// x[k] = rank (rank + k) % world's x, so x[0] is ours; the sum's order does not matter
// within the tolerance.
template <class T>
kf::Peers<const T> rotated(const kf::Comm& comm, const T* x) {
  kf::Peers<const T> p{};
  for (int k = 0; k < comm.world; ++k) p.ptr[k] = comm.peer(x, (comm.rank + k) % comm.world);
  return p;
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
  const int root = static_cast<int>(t.iparam("root", 0));
  const int terms = comm.rank == root ? comm.world : 1;
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  if (x.dtype == kf::DType::bf16)
    reduce_kernel<<<blocks_for(n), 256, 0, comm.stream()>>>(
        rotated(comm, x.ptr<const __nv_bfloat16>()), y.ptr<__nv_bfloat16>(), n, terms);
  else
    reduce_kernel<<<blocks_for(n), 256, 0, comm.stream()>>>(rotated(comm, x.ptr<const float>()),
                                                            y.ptr<float>(), n, terms);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
