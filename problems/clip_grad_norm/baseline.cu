// clip_grad_norm baseline: what eager PyTorch runs for ParallelKernelBench's reference,
// kernel by kernel, with its one all-reduce through NCCL:
//   acc = torch.tensor(0.0)                     cudaMemsetAsync
//   for g in (g0, g1, g2):
//     gf = g.float()                            to_float_kernel
//     gn = torch.norm(gf, p=2)                  sumsq_kernel (block partials), sqrt_kernel
//     acc = acc + gn ** 2                       square_add_kernel
//   dist.all_reduce(acc, SUM)                   ncclAllReduce (fp32, one element)
//   total_norm = acc ** 0.5                     sqrt_kernel, straight into the norm output
//   if total_norm > max_norm:                   gt_kernel, then a device-to-host copy that
//                                               waits for the stream (Tensor.__bool__)
//     coef = max_norm / total_norm              rdiv_kernel
//     g.mul_(coef) for each g                   mul_kernel (bf16 * fp32 scalar, one rounding)
// The gradients are inputs here, so mul_ writes y0..y2 instead of g0..g2 (the same bytes
// read and written); when nothing is clipped y is a copy of g. The fp32 copy of a
// gradient reuses one scratch buffer, as the caching allocator would.
#include <cuda_bf16.h>
#include <nccl.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

using bf16 = __nv_bfloat16;

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;  // the norm's partial sums: one per block

// Scratch, sized in kf_setup for its shapes.
float* g_gf = nullptr;        // [M, N]: one gradient as fp32
float* g_partials = nullptr;  // [kMaxBlocks]: the norm's block sums
float* g_scalars = nullptr;   // [4]: gn, acc, coef, and the flag (0 or 1)
float g_flag_host = 0;        // the flag on the host
int64_t g_numel = 0;

int blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < kMaxBlocks ? (b < 1 ? 1 : b) : kMaxBlocks);
}

// A grid-stride loop over e < n, as PyTorch's elementwise kernels cover a tensor.
#define KF_FOR_EACH(e, n)                                                                \
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < (n); \
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)

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

__global__ void to_float_kernel(const bf16* x, float* out, int64_t n) {
  KF_FOR_EACH(e, n) out[e] = __bfloat162float(x[e]);
}
// partials[b] = block b's share of the sum of x^2 (the first pass of the norm's reduction)
__global__ void sumsq_kernel(const float* x, float* partials, int64_t n) {
  float s = 0.0f;
  KF_FOR_EACH(e, n) s += x[e] * x[e];
  s = block_sum(s);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}
// out = sqrt(the sum of the first `count` values of in): one block (the second pass)
__global__ void sqrt_kernel(const float* in, int count, float* out) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < count; i += kThreads) s += in[i];
  s = block_sum(s);
  if (threadIdx.x == 0) *out = sqrtf(s);
}
__global__ void square_add_kernel(const float* gn, float* acc) {
  *acc = *acc + *gn * *gn;
}
__global__ void gt_kernel(const float* x, float bound, float* flag) {
  *flag = *x > bound ? 1.0f : 0.0f;
}
__global__ void rdiv_kernel(float a, const float* x, float* out) {
  *out = a / *x;
}
// y[e] = bf16(g[e] * coef): a bf16 tensor times an fp32 scalar computes in fp32
__global__ void mul_kernel(const bf16* g, const float* coef, bf16* y, int64_t n) {
  const float c = *coef;
  KF_FOR_EACH(e, n) y[e] = __float2bfloat16_rn(__bfloat162float(g[e]) * c);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_numel = t["g0"].numel;
  g_gf = comm.alloc_array<float>(static_cast<size_t>(g_numel));
  g_partials = comm.alloc_array<float>(kMaxBlocks);
  g_scalars = comm.alloc_array<float>(4);
  return g_gf && g_partials && g_scalars ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const char* grads[3] = {"g0", "g1", "g2"};
  const char* outs[3] = {"y0", "y1", "y2"};
  const int64_t n = t["g0"].numel;
  if (n != g_numel) return 1;  // not the shape kf_setup sized the scratch for
  cudaStream_t st = comm.stream();
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  float* gn = g_scalars;
  float* acc = g_scalars + 1;
  float* coef = g_scalars + 2;
  float* flag = g_scalars + 3;
  float* norm = t["norm"].ptr<float>();
  const int blocks = blocks_for(n);

  if (cudaMemsetAsync(acc, 0, sizeof(float), st) != cudaSuccess) return 1;
  for (const char* g : grads) {
    to_float_kernel<<<blocks, kThreads, 0, st>>>(t[g].ptr<const bf16>(), g_gf, n);
    sumsq_kernel<<<blocks, kThreads, 0, st>>>(g_gf, g_partials, n);
    sqrt_kernel<<<1, kThreads, 0, st>>>(g_partials, blocks, gn);
    square_add_kernel<<<1, 1, 0, st>>>(gn, acc);
  }
  if (ncclAllReduce(acc, acc, 1, ncclFloat32, ncclSum, nc, st) != ncclSuccess) return 1;
  sqrt_kernel<<<1, kThreads, 0, st>>>(acc, 1, norm);
  const float max_norm = static_cast<float>(t.param("max_norm"));
  gt_kernel<<<1, 1, 0, st>>>(norm, max_norm, flag);
  if (cudaMemcpyAsync(&g_flag_host, flag, sizeof(float), cudaMemcpyDeviceToHost, st) !=
          cudaSuccess ||
      cudaStreamSynchronize(st) != cudaSuccess)
    return 1;
  if (g_flag_host != 0.0f) {
    rdiv_kernel<<<1, 1, 0, st>>>(max_norm, norm, coef);
    for (int k = 0; k < 3; ++k)
      mul_kernel<<<blocks, kThreads, 0, st>>>(t[grads[k]].ptr<const bf16>(), coef,
                                              t[outs[k]].ptr<bf16>(), n);
  } else {
    for (int k = 0; k < 3; ++k)
      if (cudaMemcpyAsync(t[outs[k]].data, t[grads[k]].data, static_cast<size_t>(n) * sizeof(bf16),
                          cudaMemcpyDeviceToDevice, st) != cudaSuccess)
        return 1;
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
