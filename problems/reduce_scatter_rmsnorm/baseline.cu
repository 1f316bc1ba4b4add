// reduce_scatter_rmsnorm baseline: what PyTorch runs for
//   dist.reduce_scatter_tensor(m, x); m.div_(world)
//   y = (m.float() * rsqrt(m.float().pow(2).mean(-1) + eps) * gamma.float()).to(bf16)
// with gamma on rank 0 alone (problem.json), which PyTorch would hand round with
// dist.broadcast: one NCCL group of ncclBroadcast (rank 0's gamma into a local copy) and
// ncclReduceScatter (our share's sums, bf16, into a scratch), then one simple kernel, a
// block per row: the division by world rounded to bf16 (div_ on a bf16 tensor), the
// row's mean square in fp32, and y in fp32 rounded to bf16.
#include <cuda_bf16.h>
#include <nccl.h>

#include <kf/kf.cuh>

namespace {

constexpr int kThreads = 128;

__nv_bfloat16* g_sum = nullptr;    // [rows * hidden]: our share, summed over ranks
__nv_bfloat16* g_gamma = nullptr;  // [hidden]: rank 0's gamma
int64_t g_rows = 0, g_hidden = 0;

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

// The mean element: sum / world, rounded to bf16 as m.div_(world) leaves it.
__device__ float mean_of(__nv_bfloat16 sum, float world) {
  return __bfloat162float(__float2bfloat16_rn(__bfloat162float(sum) / world));
}

__global__ void __launch_bounds__(kThreads)
    rmsnorm_kernel(const __nv_bfloat16* sum, const __nv_bfloat16* gamma, __nv_bfloat16* y,
                   int64_t rows, int64_t hidden, float world, float eps) {
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {  // uniform in the block
    const __nv_bfloat16* row = sum + i * hidden;
    float squares = 0.0f;
    for (int64_t j = threadIdx.x; j < hidden; j += kThreads) {
      const float m = mean_of(row[j], world);
      squares += m * m;
    }
    const float inv_rms = rsqrtf(block_sum(squares) / static_cast<float>(hidden) + eps);
    for (int64_t j = threadIdx.x; j < hidden; j += kThreads)
      y[i * hidden + j] =
          __float2bfloat16_rn(mean_of(row[j], world) * inv_rms * __bfloat162float(gamma[j]));
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_rows = t["y"].shape[0];
  g_hidden = t["y"].shape[1];
  g_sum = comm.alloc_array<__nv_bfloat16>(static_cast<size_t>(g_rows * g_hidden));
  g_gamma = comm.alloc_array<__nv_bfloat16>(static_cast<size_t>(g_hidden));
  return g_sum && g_gamma ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& gamma = t["gamma"];  // hidden elements on rank 0, none elsewhere
  kf::Tensor& y = t["y"];
  const int64_t rows = y.shape[0], hidden = y.shape[1];
  if (rows != g_rows || hidden != g_hidden) return 1;  // not what kf_setup sized for
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  if (ncclGroupStart() != ncclSuccess) return 1;
  ncclResult_t b = ncclBroadcast(gamma.data, g_gamma, static_cast<size_t>(hidden), ncclBfloat16, 0,
                                 nc, comm.stream());
  ncclResult_t r = ncclReduceScatter(x.data, g_sum, static_cast<size_t>(rows * hidden),
                                     ncclBfloat16, ncclSum, nc, comm.stream());
  if (ncclGroupEnd() != ncclSuccess || b != ncclSuccess || r != ncclSuccess) return 1;
  const int64_t blocks = rows < 65535 ? rows : 65535;
  rmsnorm_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, comm.stream()>>>(
      g_sum, g_gamma, y.ptr<__nv_bfloat16>(), rows, hidden, static_cast<float>(comm.world),
      static_cast<float>(t.param("eps")));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
