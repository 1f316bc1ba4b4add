// vocab_parallel_cross_entropy baseline: what PyTorch runs for the reference, in bf16,
// kernel by kernel, with its three all-reduces through NCCL:
//   m = logits.max(-1); all_reduce(m, MAX)          row_max_kernel, ncclAllReduce
//   d = logits - m                                  shift_kernel (the reference's in-place
//                                                   sub_; here into scratch: inputs stay)
//   p = d[row, c - start] where c is ours, else 0   label_kernel (mask, index, masked_fill)
//   all_reduce(p, SUM)                              ncclAllReduce
//   s = exp(d).sum(-1); all_reduce(s, SUM)          exp_kernel, row_sum_kernel, ncclAllReduce
//   loss = log(s) - p                               loss_kernel
// Every result is rounded to bf16 where PyTorch's is (each elementwise kernel computes in
// float and rounds its output; the sum accumulates in float and rounds once). The label
// is rank 0's target (problem.json): label_kernel reads it through the peer pointer.
// That is safe without a barrier of its own: it runs after the max all-reduce, which no
// rank finishes before rank 0 has entered this call, and rank 0 cannot finish the label
// all-reduce, so cannot return, before every rank's label_kernel has run.
#include <cuda_bf16.h>
#include <nccl.h>

#include <cmath>
#include <cstdint>
#include <kf/kf.cuh>

namespace {

using bf16 = __nv_bfloat16;

// Scratch, sized in kf_setup for its shapes.
bf16* g_shifted = nullptr;  // [rows, vl]: logits - row max
bf16* g_exp = nullptr;      // [rows, vl]: exp of that
bf16* g_max = nullptr;      // [rows]: the row max, then all-reduced
bf16* g_label = nullptr;    // [rows]: the label's shifted logit (0 off our shard), summed
bf16* g_sum = nullptr;      // [rows]: the sum of exponentials, then all-reduced
int64_t g_rows = 0, g_vl = 0;

constexpr int kThreads = 256;
constexpr int kRowsPerBlock = kThreads / 32;  // one warp per row in the row reductions

int blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}
int row_blocks(int64_t rows) {
  return static_cast<int>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void row_max_kernel(const bf16* x, bf16* out, int64_t rows, int64_t vl) {
  const int64_t row = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / 32;
  if (row >= rows) return;
  float m = -INFINITY;
  for (int64_t v = threadIdx.x % 32; v < vl; v += 32)
    m = fmaxf(m, __bfloat162float(x[row * vl + v]));
  m = warp_max(m);
  if (threadIdx.x % 32 == 0) out[row] = __float2bfloat16_rn(m);
}

__global__ void row_sum_kernel(const bf16* x, bf16* out, int64_t rows, int64_t vl) {
  const int64_t row = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / 32;
  if (row >= rows) return;
  float s = 0.0f;
  for (int64_t v = threadIdx.x % 32; v < vl; v += 32) s += __bfloat162float(x[row * vl + v]);
  s = warp_sum(s);
  if (threadIdx.x % 32 == 0) out[row] = __float2bfloat16_rn(s);
}

// d[row][v] = bf16(x[row][v] - m[row])
__global__ void shift_kernel(const bf16* x, const bf16* m, bf16* d, int64_t rows, int64_t vl) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < rows * vl;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    d[e] = __float2bfloat16_rn(__bfloat162float(x[e]) - __bfloat162float(m[e / vl]));
}

// p[row] = d[row][c - start] when the label c = target[row] falls in [start, start + vl).
__global__ void label_kernel(const bf16* d, const int64_t* target, bf16* p, int64_t rows,
                             int64_t vl, int64_t start) {
  for (int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = target[row] - start;
    p[row] = c >= 0 && c < vl ? d[row * vl + c] : __float2bfloat16_rn(0.0f);
  }
}

__global__ void exp_kernel(const bf16* d, bf16* out, int64_t n) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[e] = __float2bfloat16_rn(expf(__bfloat162float(d[e])));
}

// loss = bf16(bf16(log(s)) - p)
__global__ void loss_kernel(const bf16* s, const bf16* p, bf16* loss, int64_t rows) {
  for (int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float lg = __bfloat162float(__float2bfloat16_rn(logf(__bfloat162float(s[row]))));
    loss[row] = __float2bfloat16_rn(lg - __bfloat162float(p[row]));
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  g_rows = logits.shape[0] * logits.shape[1];
  g_vl = logits.shape[2];
  g_shifted = comm.alloc_array<bf16>(static_cast<size_t>(g_rows * g_vl));
  g_exp = comm.alloc_array<bf16>(static_cast<size_t>(g_rows * g_vl));
  g_max = comm.alloc_array<bf16>(static_cast<size_t>(g_rows));
  g_label = comm.alloc_array<bf16>(static_cast<size_t>(g_rows));
  g_sum = comm.alloc_array<bf16>(static_cast<size_t>(g_rows));
  return g_shifted && g_exp && g_max && g_label && g_sum ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  const kf::Tensor& target = t["target"];
  const int64_t rows = logits.shape[0] * logits.shape[1], vl = logits.shape[2];
  if (rows != g_rows || vl != g_vl) return 1;  // not the shapes kf_setup sized the scratch for
  const bf16* x = logits.ptr<const bf16>();
  const int64_t* label0 = comm.peer(target.ptr<const int64_t>(), 0);  // rank 0's labels
  cudaStream_t st = comm.stream();
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  const size_t count = static_cast<size_t>(rows);

  row_max_kernel<<<row_blocks(rows), kThreads, 0, st>>>(x, g_max, rows, vl);
  if (ncclAllReduce(g_max, g_max, count, ncclBfloat16, ncclMax, nc, st) != ncclSuccess) return 1;
  shift_kernel<<<blocks_for(rows * vl), kThreads, 0, st>>>(x, g_max, g_shifted, rows, vl);
  label_kernel<<<blocks_for(rows), kThreads, 0, st>>>(g_shifted, label0, g_label, rows, vl,
                                                      comm.rank * vl);
  if (ncclAllReduce(g_label, g_label, count, ncclBfloat16, ncclSum, nc, st) != ncclSuccess)
    return 1;
  exp_kernel<<<blocks_for(rows * vl), kThreads, 0, st>>>(g_shifted, g_exp, rows * vl);
  row_sum_kernel<<<row_blocks(rows), kThreads, 0, st>>>(g_exp, g_sum, rows, vl);
  if (ncclAllReduce(g_sum, g_sum, count, ncclBfloat16, ncclSum, nc, st) != ncclSuccess) return 1;
  loss_kernel<<<blocks_for(rows), kThreads, 0, st>>>(g_sum, g_label, t["loss"].ptr<bf16>(), rows);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
