// A simple correct UVA candidate for tp_rms_norm: one kernel, a block per row, sums the
// row's squares over our N columns into our scratch; a barrier kernel (every rank's sums
// are this call's); a second kernel, a block per row, adds up the row's sums of every
// rank through UVA loads (in rank order), so it has the sum over all world * N columns,
// and writes our columns of y = weight * x / rms; a second barrier (no rank rewrites its
// sums in the next call while a peer still reads them).
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

constexpr int kThreads = 128;

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 after the sums and slot 1 on
// exit, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;
float* g_squares = nullptr;  // [M]: this rank's sum of squares of each row

// The sum of v over the block; every thread gets it.
__device__ float block_sum(float v) {
  __shared__ float warp_sums[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
  __syncthreads();  // every thread has read warp_sums before a next row rewrites it
  return total;
}

// squares[i] = the sum over our columns j of x[i][j]^2, in fp32.
__global__ void __launch_bounds__(kThreads)
    squares_kernel(const __nv_bfloat16* x, float* squares, int64_t m, int64_t n) {
  for (int64_t i = blockIdx.x; i < m; i += gridDim.x) {  // uniform in the block
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      const float v = __bfloat162float(x[i * n + j]);
      s += v * v;
    }
    s = block_sum(s);
    if (threadIdx.x == 0) squares[i] = s;
  }
}

// y[i][j] = weight[j] * x[i][j] * rsqrt(S[i] / columns + eps), S[i] summed over the ranks.
__global__ void __launch_bounds__(kThreads)
    norm_kernel(kf::Peers<const float> squares, const __nv_bfloat16* x, const __nv_bfloat16* weight,
                __nv_bfloat16* y, int64_t m, int64_t n, int world, float columns, float eps) {
  for (int64_t i = blockIdx.x; i < m; i += gridDim.x) {
    float s = 0.0f;
    for (int r = 0; r < world; ++r) s += squares[r][i];  // every thread, the same order
    const float inv_rms = rsqrtf(s / columns + eps);
    for (int64_t j = threadIdx.x; j < n; j += kThreads)
      y[i * n + j] = __float2bfloat16_rn(__bfloat162float(x[i * n + j]) * inv_rms *
                                         __bfloat162float(weight[j]));
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_sig = kf::make_signals(comm, 2);
  g_squares = comm.alloc_array<float>(static_cast<size_t>(t["x"].shape[0]));
  return g_sig.local && g_squares ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const int64_t m = x.shape[0], n = x.shape[1];
  const unsigned blocks = static_cast<unsigned>(m < 65535 ? m : 65535);
  const float columns = static_cast<float>(comm.world) * static_cast<float>(n);  // all ranks'
  const uint32_t epoch = kf::next_epoch();
  // Safe before any barrier: every peer finished reading our last sums before the last
  // call's exit barrier, which this stream has passed.
  squares_kernel<<<blocks, kThreads, 0, comm.stream()>>>(x.ptr<const __nv_bfloat16>(), g_squares, m,
                                                         n);
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  norm_kernel<<<blocks, kThreads, 0, comm.stream()>>>(
      kf::peers(comm, static_cast<const float*>(g_squares)), x.ptr<const __nv_bfloat16>(),
      t["weight"].ptr<const __nv_bfloat16>(), t["y"].ptr<__nv_bfloat16>(), m, n, comm.world,
      columns, static_cast<float>(t.param("eps")));
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
