// A simple correct UVA candidate for gemv_decode, neither fused nor overlapped: one kernel
// computes our piece x @ w^T + bias (one warp per output, fp32, rounded once to bf16) into
// a symmetric scratch [T, V]; a barrier kernel (every rank's piece is ready); one kernel
// copies every peer's piece into its columns of logits (each rank reads all of them: a
// pull all-gather with torch.cat's layout); a second barrier (no peer's piece is
// recomputed while another rank still reads it).
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 after the product, slot 1 at
// the end, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;
__nv_bfloat16* g_piece = nullptr;  // [T, V]

int blocks_for(int64_t n, int64_t per_block) {
  const int64_t b = (n + per_block - 1) / per_block;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// piece[i][j] = x[i] . w[j] + bias[j] for i < t, j < v: warp o of the grid takes outputs
// o, o + warps, ...; its lanes split the h < H terms (lane l takes l, l + 32, ...) and a
// shuffle sums the 32 partials.
__global__ void gemv_kernel(const __nv_bfloat16* x, const __nv_bfloat16* w,
                            const __nv_bfloat16* bias, __nv_bfloat16* piece, int64_t t, int64_t h,
                            int64_t v) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32; o < t * v;
       o += warps) {  // uniform in the warp
    const int64_t i = o / v, j = o % v;
    const __nv_bfloat16* xr = x + i * h;
    const __nv_bfloat16* wr = w + j * h;
    float acc = 0.0f;
    for (int64_t k = lane; k < h; k += 32) acc += __bfloat162float(xr[k]) * __bfloat162float(wr[k]);
    for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) piece[o] = __float2bfloat16_rn(acc + __bfloat162float(bias[j]));
  }
}

// logits[i][s*v + j] = piece(s)[i][j]: one grid-stride pass over all of logits.
__global__ void gather_kernel(kf::Peers<const __nv_bfloat16> piece, __nv_bfloat16* logits,
                              int64_t t, int64_t v, int world) {
  const int64_t cols = v * world, total = t * cols;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e / cols, s = e % cols / v, j = e % v;
    logits[e] = piece[static_cast<int>(s)][i * v + j];
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_sig = kf::make_signals(comm, 2);
  g_piece = comm.alloc_array<__nv_bfloat16>(static_cast<size_t>(t["x"].shape[0] * t["w"].shape[0]));
  return g_sig.local && g_piece ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& w = t["w"];
  kf::Tensor& logits = t["logits"];
  const int64_t tokens = x.shape[0], h = x.shape[1], v = w.shape[0];
  const uint32_t epoch = kf::next_epoch();
  // No barrier first: the last call's final barrier saw every peer done with our piece.
  gemv_kernel<<<blocks_for(tokens * v, kWarps), kThreads, 0, comm.stream()>>>(
      x.ptr<const __nv_bfloat16>(), w.ptr<const __nv_bfloat16>(),
      t["bias"].ptr<const __nv_bfloat16>(), g_piece, tokens, h, v);
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  gather_kernel<<<blocks_for(logits.numel, kThreads), kThreads, 0, comm.stream()>>>(
      kf::peers(comm, static_cast<const __nv_bfloat16*>(g_piece)), logits.ptr<__nv_bfloat16>(),
      tokens, v, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
