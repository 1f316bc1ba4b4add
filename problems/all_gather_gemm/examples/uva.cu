// A simple correct UVA candidate for all_gather_gemm, neither fused nor overlapped: a
// barrier kernel (every rank's a is ready), one kernel that computes c = [a(0) | ... ] @ b
// in fp32 with a thread per element, reading every peer's a straight from the peer's
// memory, and a second barrier (no peer's a is regenerated while another rank reads it).
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 on entry, slot 1 on exit, with
// one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// c[i][j] = sum over ranks s, k < kl of a(s)[i][k] * b[s*kl + k][j].
__global__ void matmul_kernel(kf::Peers<const __nv_bfloat16> a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, int64_t m, int64_t kl, int64_t n, int world) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < m * n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e / n, j = e % n;
    float s = 0.0f;
    for (int r = 0; r < world; ++r)
      for (int64_t k = 0; k < kl; ++k)
        s += __bfloat162float(a[r][i * kl + k]) * __bfloat162float(b[(r * kl + k) * n + j]);
    c[e] = __float2bfloat16_rn(s);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  kf::Tensor& c = t["c"];
  const int64_t m = a.shape[0], kl = a.shape[1], n = b.shape[1];
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  matmul_kernel<<<blocks_for(m * n), 256, 0, comm.stream()>>>(
      kf::peers(comm, a.ptr<const __nv_bfloat16>()), b.ptr<const __nv_bfloat16>(),
      c.ptr<__nv_bfloat16>(), m, kl, n, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
