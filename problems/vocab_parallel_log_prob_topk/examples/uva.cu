// A simple correct UVA candidate for vocab_parallel_log_prob_topk, in the reference's
// sequence-parallel layout but without a sort.
//   barrier 0: every rank has entered the call (every logits is this call's)
//   logprob_kernel: one block per token of our block: its full row from the world shards
//     into shared memory (plus the boost at the label); an entry passes top-k when fewer
//     than k entries are larger, and top-p when the kept probability below it (equal
//     entries before it counted as below) plus its own exceeds 1 - p; the label's
//     log-prob over what passes both, into our symmetric scratch
//   barrier 1: every rank's block is written
//   gather_kernel: logp[i] from the block's owner (the all-gather)
//   barrier 2: nobody rewrites its block or its logits while a peer still reads them
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <kf/kf.cuh>

namespace {

using bf16 = __nv_bfloat16;

// kf's one-block barrier kernel (<kf/signal.cuh>): slots 0, 1 and 2 as above, with one
// epoch per call, so its words never need a reset.
kf::SignalSet g_sig;
float* g_logp = nullptr;  // [T]: our block's log-probs

constexpr int kThreads = 256;

// The sum (or the minimum) over the block of every thread's v, returned to every thread.
__device__ float block_reduce(float v, bool min, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = min ? fminf(v, w) : v + w;
  }
  __syncthreads();  // scratch may still be read by the last reduction
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) r = min ? fminf(r, scratch[w]) : r + scratch[w];
  return r;
}

// One block per token i = first + blockIdx.x; `row` holds its V floats (dynamic shared).
__global__ void logprob_kernel(kf::Peers<const bf16> logits, const int64_t* target, float* logp,
                               int64_t first, int64_t vl, int world, int64_t k, float top_p,
                               float boost) {
  extern __shared__ float row[];
  __shared__ float scratch[kThreads / 32];
  __shared__ int label_kept;
  const int64_t i = first + blockIdx.x, vocab = world * vl, c = target[i];
  for (int64_t v = threadIdx.x; v < vocab; v += kThreads) {
    const float z = __bfloat162float(logits[static_cast<int>(v / vl)][i * vl + v % vl]);
    row[v] = v == c ? z + boost : z;
  }
  if (threadIdx.x == 0) label_kept = 0;
  __syncthreads();
  float m = -INFINITY;  // the row max, the shift of every exponential
  for (int64_t v = 0; v < vocab; ++v) m = fmaxf(m, row[v]);
  // Top-k: h, the k-th largest, is the smallest entry with fewer than k larger ones.
  float h = INFINITY;
  for (int64_t v = threadIdx.x; v < vocab; v += kThreads) {
    int64_t larger = 0;
    for (int64_t u = 0; u < vocab; ++u) larger += row[u] > row[v];
    if (larger < k) h = fminf(h, row[v]);
  }
  h = block_reduce(h, true, scratch);
  float part = 0.0f;
  for (int64_t v = threadIdx.x; v < vocab; v += kThreads)
    if (row[v] >= h) part += expf(row[v] - m);
  const float total = block_reduce(part, false, scratch);
  // Top-p: v's place in ascending order comes after the smaller kept entries and the equal
  // ones with a smaller index; v is kept when the cumulative probability there is > 1 - p,
  // and the last place always.
  part = 0.0f;
  for (int64_t v = threadIdx.x; v < vocab; v += kThreads) {
    if (row[v] < h) continue;
    float below = 0.0f;
    bool last = true;
    for (int64_t u = 0; u < vocab; ++u) {
      if (row[u] >= h && (row[u] < row[v] || (row[u] == row[v] && u < v)))
        below += expf(row[u] - m);
      if (row[u] > row[v] || (row[u] == row[v] && u > v)) last = false;
    }
    const float e = expf(row[v] - m);
    if ((below + e) / total > 1.0f - top_p || last) {
      part += e;
      if (v == c) label_kept = 1;
    }
  }
  const float kept = block_reduce(part, false, scratch);  // its barriers publish label_kept
  if (threadIdx.x == 0) logp[blockIdx.x] = label_kept ? row[c] - m - logf(kept) : -INFINITY;
}

__global__ void gather_kernel(kf::Peers<const float> logp, float* out, int64_t rows,
                              int64_t per_rank) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < rows;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = logp[static_cast<int>(i / per_rank)][i % per_rank];
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const int64_t rows = t["logits"].shape[0] * t["logits"].shape[1];
  g_sig = kf::make_signals(comm, 3);
  g_logp = comm.alloc_array<float>(static_cast<size_t>(rows / comm.world));
  return g_sig.local && g_logp ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  const int64_t rows = logits.shape[0] * logits.shape[1], vl = logits.shape[2];
  const int64_t per_rank = rows / comm.world;
  const size_t shared = static_cast<size_t>(comm.world * vl) * sizeof(float);
  if (shared > 48 * 1024) return 1;  // the row must fit the default shared memory
  const uint32_t epoch = kf::next_epoch();
  cudaStream_t st = comm.stream();
  kf::launch_barrier(g_sig, 0, epoch, st);
  logprob_kernel<<<static_cast<int>(per_rank), kThreads, shared, st>>>(
      kf::peers(comm, logits.ptr<const bf16>()), t["target"].ptr<const int64_t>(), g_logp,
      comm.rank * per_rank, vl, comm.world, t.iparam("top_k", 10),
      static_cast<float>(t.param("top_p", 0.9)), static_cast<float>(t.param("boost", 8)));
  kf::launch_barrier(g_sig, 1, epoch, st);
  const int blocks = static_cast<int>((rows + kThreads - 1) / kThreads);
  gather_kernel<<<blocks, kThreads, 0, st>>>(kf::peers(comm, static_cast<const float*>(g_logp)),
                                             t["logp"].ptr<float>(), rows, per_rank);
  kf::launch_barrier(g_sig, 2, epoch, st);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
