// A simple correct UVA candidate for clip_grad_norm: one kernel sums the squares of our
// g0, g1, g2 into per-block partial sums (fp32); a one-block kernel adds those up into our
// scratch value; a barrier kernel (every rank's value is this call's); a scale kernel in
// which every thread reads every rank's value through UVA loads (in rank order, so every
// thread and every rank gets the same bits), takes the square root and writes our
// gradients times max_norm / norm (when the norm exceeds max_norm), rounding once to bf16;
// a second barrier (no rank rewrites its value in the next call while a peer still reads
// it).
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

constexpr int kThreads = 256;
constexpr int kBlocks = 264;  // partial sums: two blocks per SM of an H100

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 after the sums and slot 1 on
// exit, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;
float* g_partials = nullptr;  // [kBlocks]: our block sums
float* g_squares = nullptr;   // [1]: this rank's sum of squares, read by every peer

struct Grads {
  const __nv_bfloat16* g[3];
};
struct Outs {
  __nv_bfloat16* y[3];
};

// The sum of v over the block; thread 0 gets it.
__device__ float block_sum(float v) {
  __shared__ float warp_sums[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
  return total;
}

// partials[b] = block b's share of the squares of g0, g1, g2 (numel elements each).
__global__ void __launch_bounds__(kThreads)
    squares_kernel(Grads in, float* partials, int64_t numel) {
  float s = 0.0f;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int k = 0; k < 3; ++k)
    for (int64_t e = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; e < numel;
         e += stride) {
      const float v = __bfloat162float(in.g[k][e]);
      s += v * v;
    }
  s = block_sum(s);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

// *out = the sum of the kBlocks partials: one block.
__global__ void __launch_bounds__(kThreads) finish_kernel(const float* partials, float* out) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < kBlocks; i += kThreads) s += partials[i];
  s = block_sum(s);
  if (threadIdx.x == 0) *out = s;
}

// y_k = bf16(g_k * coef), coef from the sum of every rank's squares; block 0 writes norm.
__global__ void __launch_bounds__(kThreads)
    scale_kernel(kf::Peers<const float> squares, Grads in, Outs out, float* norm_out, int64_t numel,
                 int world, float max_norm) {
  float total = 0.0f;
  for (int r = 0; r < world; ++r) total += *squares[r];  // every thread, the same order
  const float norm = sqrtf(total);
  const float coef = norm > max_norm ? max_norm / norm : 1.0f;
  if (blockIdx.x == 0 && threadIdx.x == 0) *norm_out = norm;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int k = 0; k < 3; ++k)
    for (int64_t e = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; e < numel;
         e += stride)
      out.y[k][e] = __float2bfloat16_rn(__bfloat162float(in.g[k][e]) * coef);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  g_partials = comm.alloc_array<float>(kBlocks);
  g_squares = comm.alloc_array<float>(1);
  return g_sig.local && g_partials && g_squares ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const int64_t numel = t["g0"].numel;
  const Grads in = {{t["g0"].ptr<const __nv_bfloat16>(), t["g1"].ptr<const __nv_bfloat16>(),
                     t["g2"].ptr<const __nv_bfloat16>()}};
  const Outs out = {
      {t["y0"].ptr<__nv_bfloat16>(), t["y1"].ptr<__nv_bfloat16>(), t["y2"].ptr<__nv_bfloat16>()}};
  const uint32_t epoch = kf::next_epoch();
  // Safe before any barrier: every peer finished reading our last value before the last
  // call's exit barrier, which this stream has passed.
  squares_kernel<<<kBlocks, kThreads, 0, comm.stream()>>>(in, g_partials, numel);
  finish_kernel<<<1, kThreads, 0, comm.stream()>>>(g_partials, g_squares);
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  scale_kernel<<<kBlocks, kThreads, 0, comm.stream()>>>(
      kf::peers(comm, static_cast<const float*>(g_squares)), in, out, t["norm"].ptr<float>(), numel,
      comm.world, static_cast<float>(t.param("max_norm")));
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
