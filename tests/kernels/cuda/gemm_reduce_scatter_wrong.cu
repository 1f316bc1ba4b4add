// Fault (problem gemm_reduce_scatter): computes every partial product right but sums the
// partials from rank 1 on, leaving rank 0's out (world 1: c = 0), wrong at every world
// size. Verdict: mismatch on c from index 0.
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

// Slot 0 after the product, slot 1 at the end, one epoch per call.
kf::SignalSet g_sig;
float* g_partial = nullptr;  // [M, N]

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

__global__ void matmul_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, float* p, int64_t m,
                              int64_t kl, int64_t n) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < m * n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e / n, j = e % n;
    float s = 0.0f;
    for (int64_t k = 0; k < kl; ++k)
      s += __bfloat162float(a[i * kl + k]) * __bfloat162float(b[k * n + j]);
    p[e] = s;
  }
}

__global__ void sum_kernel(kf::Peers<const float> p, __nv_bfloat16* c, int64_t first, int64_t count,
                           int world) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (int r = 1; r < world; ++r) s += p[r][first + e];  // the bug: r = 1
    c[e] = __float2bfloat16_rn(s);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_sig = kf::make_signals(comm, 2);
  g_partial = comm.alloc_array<float>(static_cast<size_t>(t["a"].shape[0] * t["b"].shape[1]));
  return g_sig.local && g_partial ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const int64_t m = t["a"].shape[0], kl = t["a"].shape[1], n = t["b"].shape[1];
  const int64_t rows = m / comm.world;
  const uint32_t epoch = kf::next_epoch();
  matmul_kernel<<<blocks_for(m * n), 256, 0, comm.stream()>>>(
      t["a"].ptr<const __nv_bfloat16>(), t["b"].ptr<const __nv_bfloat16>(), g_partial, m, kl, n);
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  sum_kernel<<<blocks_for(rows * n), 256, 0, comm.stream()>>>(
      kf::peers(comm, static_cast<const float*>(g_partial)), t["c"].ptr<__nv_bfloat16>(),
      comm.rank * rows * n, rows * n, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
