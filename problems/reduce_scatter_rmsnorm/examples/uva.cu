// A simple correct UVA candidate for reduce_scatter_rmsnorm: a barrier kernel (every rank's
// x and rank 0's gamma are this call's); one kernel, a block per row of our share, that
// sums the row over every peer's x through UVA loads, divides by world, reduces the row's
// squares across the block and writes y with rank 0's gamma, also read through UVA (the
// row is summed twice, once for its mean square and once for y, rather than kept); a
// second barrier (no peer's x or rank 0's gamma is regenerated while another rank still
// reads it).
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

constexpr int kThreads = 128;

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 on entry and slot 1 on exit,
// with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;

// The sum of v over the block; every thread gets it.
__device__ float block_sum(float v) {
  __shared__ float warp_sums[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
  __syncthreads();  // every thread has read warp_sums before a next call rewrites it
  return total;
}

// Element `at` of our share, averaged over the ranks (summed in rank order in fp32).
__device__ float mean_at(const kf::Peers<const __nv_bfloat16>& x, int world, int64_t at) {
  float s = 0.0f;
  for (int r = 0; r < world; ++r) s += __bfloat162float(x[r][at]);
  return s / static_cast<float>(world);
}

// y[i][j] for rows i < rows of our share, which starts at element `first` of every x.
__global__ void __launch_bounds__(kThreads)
    rmsnorm_kernel(kf::Peers<const __nv_bfloat16> x, const __nv_bfloat16* gamma, __nv_bfloat16* y,
                   int64_t first, int64_t rows, int64_t hidden, int world, float eps) {
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {  // uniform in the block
    const int64_t row = first + i * hidden;
    float squares = 0.0f;
    for (int64_t j = threadIdx.x; j < hidden; j += kThreads) {
      const float m = mean_at(x, world, row + j);
      squares += m * m;
    }
    const float inv_rms = rsqrtf(block_sum(squares) / static_cast<float>(hidden) + eps);
    for (int64_t j = threadIdx.x; j < hidden; j += kThreads)
      y[i * hidden + j] =
          __float2bfloat16_rn(mean_at(x, world, row + j) * inv_rms * __bfloat162float(gamma[j]));
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
  const int64_t rows = y.shape[0], hidden = y.shape[1];
  // gamma has elements on rank 0 only; every rank reads rank 0's copy.
  const __nv_bfloat16* gamma0 = comm.peer(t["gamma"].ptr<const __nv_bfloat16>(), 0);
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  const int64_t blocks = rows < 65535 ? rows : 65535;
  rmsnorm_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, comm.stream()>>>(
      kf::peers(comm, x.ptr<const __nv_bfloat16>()), gamma0, y.ptr<__nv_bfloat16>(),
      comm.rank * rows * hidden, rows, hidden, comm.world, static_cast<float>(t.param("eps")));
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
