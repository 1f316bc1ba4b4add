// vocab_parallel_log_prob_topk baseline: what PyTorch runs for the reference, kernel by
// kernel, with its two collectives through NCCL:
//   all_to_all_single(logits)            one group of ncclSend/ncclRecv, a pair per peer
//   permute to [T, V] (+ boost at label)  permute_kernel (ParallelKernelBench has the boost
//                                         in its inputs; here in fp32, exact)
//   sort(dim=-1) with indices             sort_kernel (one block per row)
//   top-k threshold, masked_fill,         filter_kernel (one thread per row: the
//   softmax, cumsum, top-p mask, scatter    probabilities and their cumsum in fp32, where
//                                           PyTorch's are bf16: see problem.json)
//   log_softmax (fp32), gather            logprob_kernel (one warp per row)
//   all_gather(token_logprobs)            ncclAllGather
#include <cuda_bf16.h>
#include <nccl.h>

#include <cmath>
#include <cstdint>
#include <kf/kf.cuh>

namespace {

using bf16 = __nv_bfloat16;

// Scratch, sized in kf_setup for its shapes.
bf16* g_recv = nullptr;      // [world, T, Vl]: the all-to-all's output
float* g_full = nullptr;     // [T, V]: full rows, then (in place) the filtered rows
float* g_sorted = nullptr;   // [T, V]: each row ascending
int32_t* g_index = nullptr;  // [T, V]: where each sorted value came from
float* g_logp = nullptr;     // [T]: our block's log-probs
int64_t g_rows = 0, g_vl = 0;

constexpr int kThreads = 256;

__global__ void permute_kernel(const bf16* recv, const int64_t* label, float* full, int64_t t,
                               int64_t vl, int world, float boost) {
  const int64_t vocab = world * vl;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < t * vocab;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = e / vocab, v = e % vocab;
    const float z = __bfloat162float(recv[((v / vl) * t + j) * vl + v % vl]);
    full[e] = v == label[j] ? z + boost : z;
  }
}

// One block per row: an element's place is the count of smaller elements, and of equal
// ones before it (a stable sort).
__global__ void sort_kernel(const float* full, float* sorted, int32_t* index, int64_t vocab) {
  extern __shared__ float row[];
  const float* z = full + blockIdx.x * vocab;
  for (int64_t v = threadIdx.x; v < vocab; v += blockDim.x) row[v] = z[v];
  __syncthreads();
  for (int64_t e = threadIdx.x; e < vocab; e += blockDim.x) {
    int64_t pos = 0;
    for (int64_t u = 0; u < vocab; ++u) pos += row[u] < row[e] || (row[u] == row[e] && u < e);
    sorted[blockIdx.x * vocab + pos] = row[e];
    index[blockIdx.x * vocab + pos] = static_cast<int32_t>(e);
  }
}

// One thread per row: threshold, mask, softmax, cumsum, top-p mask, scatter into `full`.
__global__ void filter_kernel(float* full, const float* sorted, const int32_t* index, int64_t t,
                              int64_t vocab, int64_t k, float top_p) {
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < t;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float* s = sorted + j * vocab;
    const float h = s[vocab - k], top = s[vocab - 1];
    float total = 0.0f;
    for (int64_t p = 0; p < vocab; ++p) total += s[p] >= h ? expf(s[p] - top) : 0.0f;
    float cum = 0.0f;
    for (int64_t p = 0; p < vocab; ++p) {
      const float v = s[p] >= h ? s[p] : -INFINITY;
      cum += s[p] >= h ? expf(s[p] - top) / total : 0.0f;
      full[j * vocab + index[j * vocab + p]] = cum > 1.0f - top_p || p == vocab - 1 ? v : -INFINITY;
    }
  }
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One warp per row: log_softmax at the label.
__global__ void logprob_kernel(const float* full, const int64_t* label, float* logp, int64_t t,
                               int64_t vocab) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(kThreads / 32) + threadIdx.x / 32;
  if (j >= t) return;
  const float* z = full + j * vocab;
  float m = -INFINITY;
  for (int64_t v = threadIdx.x % 32; v < vocab; v += 32) m = fmaxf(m, z[v]);
  m = warp_max(m);
  float s = 0.0f;
  for (int64_t v = threadIdx.x % 32; v < vocab; v += 32) s += expf(z[v] - m);
  s = warp_sum(s);
  if (threadIdx.x % 32 == 0) logp[j] = z[label[j]] - m - logf(s);
}

int blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  g_rows = logits.shape[0] * logits.shape[1];
  g_vl = logits.shape[2];
  const size_t n = static_cast<size_t>(g_rows * g_vl);  // = T * V
  g_recv = comm.alloc_array<bf16>(n);
  g_full = comm.alloc_array<float>(n);
  g_sorted = comm.alloc_array<float>(n);
  g_index = comm.alloc_array<int32_t>(n);
  g_logp = comm.alloc_array<float>(static_cast<size_t>(g_rows / comm.world));
  return g_recv && g_full && g_sorted && g_index && g_logp ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  const int64_t rows = logits.shape[0] * logits.shape[1], vl = logits.shape[2];
  if (rows != g_rows || vl != g_vl) return 1;  // not the shapes kf_setup sized the scratch for
  const int64_t tt = rows / comm.world, vocab = comm.world * vl;
  const size_t block = static_cast<size_t>(tt * vl);
  const bf16* x = logits.ptr<const bf16>();
  const int64_t* label = t["target"].ptr<const int64_t>() + comm.rank * tt;  // our block's
  cudaStream_t st = comm.stream();
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);

  if (ncclGroupStart() != ncclSuccess) return 1;
  ncclResult_t r = ncclSuccess;
  for (int p = 0; p < comm.world && r == ncclSuccess; ++p) {
    r = ncclSend(x + p * block, block, ncclBfloat16, p, nc, st);
    if (r == ncclSuccess) r = ncclRecv(g_recv + p * block, block, ncclBfloat16, p, nc, st);
  }
  // The group must be closed even after an error, or the communicator stays in a group.
  if (ncclGroupEnd() != ncclSuccess || r != ncclSuccess) return 1;
  permute_kernel<<<blocks_for(tt * vocab), kThreads, 0, st>>>(
      g_recv, label, g_full, tt, vl, comm.world, static_cast<float>(t.param("boost", 8)));
  const size_t shared = static_cast<size_t>(vocab) * sizeof(float);
  if (shared > 48 * 1024) return 1;  // the row must fit the default shared memory
  sort_kernel<<<static_cast<int>(tt), kThreads, shared, st>>>(g_full, g_sorted, g_index, vocab);
  filter_kernel<<<blocks_for(tt), kThreads, 0, st>>>(g_full, g_sorted, g_index, tt, vocab,
                                                     t.iparam("top_k", 10),
                                                     static_cast<float>(t.param("top_p", 0.9)));
  logprob_kernel<<<static_cast<int>((tt + kThreads / 32 - 1) / (kThreads / 32)), kThreads, 0, st>>>(
      g_full, label, g_logp, tt, vocab);
  if (ncclAllGather(g_logp, t["logp"].ptr<float>(), static_cast<size_t>(tt), ncclFloat, nc, st) !=
      ncclSuccess)
    return 1;
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
