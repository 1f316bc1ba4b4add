// vocab_parallel_log_prob_topk, expert kernel on kf/: logp[i] = the label's log-prob under
// top-k then top-p filtering of token i's vocab-parallel logits (boost added at the label),
// the same on every rank. One warp per token, one kernel per call.
//
// topk (default): vocab parallel, on kf/topk.cuh. Barrier 1: every rank has entered (its
// target, which alone holds the labels of its block of T tokens, is this call's) and has
// finished the last call (so it no longer reads its staging). Each rank reduces its shard
// of every token to a record (its min(k, V/world) largest values, their smallest, its ties
// with that and the boosted label's value where it owns the label) and pushes it into
// slot `rank` of every rank's staging. Barrier 2: every slot is written, and no target is
// read after it. Every rank then merges each token's world records in rank order and
// scores the token itself: the same bits on every rank, no all-gather, no third barrier (a
// peer rewrites our staging only after the next call's barrier 1, which waits for our next
// kernel, which runs after this one). (world - 1) * N * (kr + 3) floats cross per rank
// instead of the reference's (world - 1) / world of the logits.
// pull: the reference's sequence-parallel layout. Barrier 1: every logits is this call's
// and every logp may be written. Rank r gathers the rows of its T tokens from the shards
// into scratch, scores them and stores each log-prob into every rank's logp (the
// all-gather, pushed). Barrier 2: every logp is complete, and our logits are not read
// after it.
// Scoring without a sort: H, the k-th largest, by radix select; the entries >= H (and the
// merged ties) pass top-k; an entry's place in ascending order is counted: it survives
// top-p when the kept mass below it (equal entries earlier in visiting order, ties first,
// count as below) plus its own exceeds 1 - p, or when it is the last. All in fp32, as the
// baseline decides. World 1 is the pull path without barriers or scratch: nothing waits,
// so its grid gives every token a warp.
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <kf/kf.cuh>
#include <kf/topk.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped).
#ifndef KF_ALGO
#define KF_ALGO topk  // topk | pull
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum where blocks wait on peers (world > 1)
#endif
#ifndef KF_THREADS
#define KF_THREADS 128  // threads per block: one warp per token
#endif

namespace vp_topk {

using bf16 = __nv_bfloat16;

enum class algo { topk, pull };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kMaxBlocks = KF_BLOCKS;  // one barrier slot per block and phase
  static constexpr int kSoloBlocks = 65535;     // world 1: no block waits
  static constexpr int kCached = 8;             // a warp keeps 8 * 32 keys in registers
  static constexpr int kFirst = 0;              // slots [0, kMaxBlocks): barrier 1
  static constexpr int kSecond = kMaxBlocks;    // slots [kMaxBlocks, 2 kMaxBlocks): barrier 2
  static constexpr int kSlots = 2 * kMaxBlocks;
};
static_assert(config::kThreads % 32 == 0, "KF_THREADS must be a multiple of 32");
constexpr unsigned kFull = 0xffffffffu;

struct globals {
  kf::SignalSet sig;
  kf::Peers<const bf16> x;          // x[r]: rank r's logits, [N][vl]
  kf::Peers<const int64_t> target;  // target[r]: rank r's; its block of T labels counts
  kf::Peers<float> out;             // pull: every rank's logp; topk: every rank's staging
  float* logp;                      // our logp
  bf16* rows;                       // pull: our tokens' full rows, [T][V]
  const float* stage;               // topk: our staging, [world][N][stride]
  int64_t n, vl, per_rank;          // N, V / world, T
  int64_t k, kr, stride;            // top_k, a record's values min(k, vl), its floats
  float top_p, boost;
  uint32_t epoch;
};

// Entry i of a contiguous row of bf16 logits, the boost added at `label` (-1: none).
struct RowLoad {
  const bf16* row;
  int64_t label;
  float boost;
  __device__ __forceinline__ float operator()(int64_t i) const {
    const float z = __bfloat162float(row[i]);
    return i == label ? z + boost : z;
  }
};
using RowKeys = kf::WarpKeys<config::kCached, RowLoad>;

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}

// The mass of the kept entries in ascending order before entry (ke, ie): smaller keys, and
// equal keys visited earlier; the ties (all at cut.h, the smallest kept) come first.
template <class Keys>
__device__ float mass_below(const Keys& keys, kf::TopkCut cut, uint32_t ke, int64_t ie, float top,
                            float eh) {
  float below = 0.0f;
  keys.each([&](uint32_t key, bool ok, int64_t i) {
    if (ok && key >= cut.h && (key < ke || (key == ke && i < ie)))
      below += expf(kf::topk_value(key) - top);
  });
  return warp_sum(below) + cut.ties * eh;
}

// The label's log-prob (value zc) over the entries both filters keep, from the warp's keys
// (a row, or the merged records) and the top-k cut. Every lane returns it.
template <class Keys>
__device__ float score(const Keys& keys, kf::TopkCut cut, float zc, float top_p) {
  const int lane = threadIdx.x % 32;
  uint32_t top_key = 0;
  keys.each([&](uint32_t key, bool ok, int64_t) { top_key = ok && key > top_key ? key : top_key; });
  top_key = __reduce_max_sync(kFull, top_key);
  const float top = kf::topk_value(top_key), eh = expf(kf::topk_value(cut.h) - top);
  float part = 0.0f;
  int last = -1;  // the last entry in ascending order: top-p always keeps it
  keys.each([&](uint32_t key, bool ok, int64_t i) {
    if (ok && key >= cut.h) part += expf(kf::topk_value(key) - top);
    if (ok && key == top_key) last = static_cast<int>(i);
  });
  last = __reduce_max_sync(kFull, last);
  const float total = warp_sum(part) + cut.ties * eh, drop = 1.0f - top_p;
  float kept = 0.0f;
  uint32_t low = 0xffffffffu;  // the smallest key kept
  keys.each([&](uint32_t key, bool ok, int64_t i) {
    for (unsigned todo = __ballot_sync(kFull, ok && key >= cut.h); todo; todo &= todo - 1) {
      const int src = __ffs(todo) - 1;  // warp-uniform: every lane scores the same entry
      const uint32_t ke = __shfl_sync(kFull, key, src);
      const int64_t ie = i - lane + src;
      const float e = expf(kf::topk_value(ke) - top);
      if ((mass_below(keys, cut, ke, ie, top, eh) + e) / total > drop || ie == last) {
        kept += e;
        low = min(low, ke);
      }
    }
  });
  // Tie j (0-based) has j ties below it and nothing else.
  unsigned tie_kept = 0;
  const int64_t ties = static_cast<int64_t>(cut.ties);
  for (int64_t j = lane; j < ties; j += 32)
    tie_kept += static_cast<float>(j + 1) * eh / total > drop;
  tie_kept = __reduce_add_sync(kFull, tie_kept);
  if (tie_kept > 0) {
    kept += static_cast<float>(tie_kept) * eh;
    low = min(low, cut.h);
  }
  return kf::topk_key(zc) >= low ? zc - top - logf(kept) : -INFINITY;
}

// Token scoring from its full row (V contiguous values) and its label c.
__device__ float score_row(const bf16* row, int64_t vocab, int64_t c, const globals& g) {
  const RowKeys keys(RowLoad{row, c, g.boost}, vocab);
  const kf::TopkCut cut{kf::warp_kth_largest(keys, g.k), 0.0f};
  return score(keys, cut, __bfloat162float(row[c]) + g.boost, g.top_p);
}

// This warp's tokens: the same on every rank for block b, so barrier slot b covers them.
__device__ __forceinline__ int64_t first_token() {
  return static_cast<int64_t>(blockIdx.x) * config::kWarps + threadIdx.x / 32;
}
__device__ __forceinline__ int64_t token_step() {
  return static_cast<int64_t>(gridDim.x) * config::kWarps;
}

// World 1: the row is our logits' row; no peer, no wait.
__global__ void __launch_bounds__(config::kThreads, 1) solo(const __grid_constant__ globals g) {
  for (int64_t i = first_token(); i < g.n; i += token_step()) {
    const float lp = score_row(g.x[0] + i * g.vl, g.vl, g.target[0][i], g);
    if (threadIdx.x % 32 == 0) g.logp[i] = lp;
  }
}

__global__ void __launch_bounds__(config::kThreads) pull(const __grid_constant__ globals g) {
  kf::barrier(g.sig, config::kFirst + blockIdx.x, g.epoch);  // logits ready, logp writable
  const int world = g.sig.world, lane = threadIdx.x % 32;
  const int64_t vocab = world * g.vl;
  for (int64_t j = first_token(); j < g.per_rank; j += token_step()) {
    const int64_t i = g.sig.rank * g.per_rank + j;  // our block's token j
    bf16* row = g.rows + j * vocab;
    for (int r = 0; r < world; ++r)  // the all-to-all: token i's shard of every rank
      for (int64_t v = lane; v < g.vl; v += 32) row[r * g.vl + v] = g.x[r][i * g.vl + v];
    __syncwarp();  // orders the lanes' stores before every lane's loads
    const float lp = score_row(row, vocab, g.target[g.sig.rank][i], g);
    if (lane < world) g.out[lane][i] = lp;  // the all-gather, one rank per lane
    for (int r = lane + 32; r < world; r += 32) g.out[r][i] = lp;
  }
  kf::barrier(g.sig, config::kSecond + blockIdx.x, g.epoch);  // every logp complete
}

// Our shard's record of token i, pushed into slot `rank` of every rank's staging.
__device__ void push_record(const globals& g, int64_t i) {
  const int world = g.sig.world, rank = g.sig.rank;
  const int64_t c = g.target[static_cast<int>(i / g.per_rank)][i] - rank * g.vl;
  const bool mine = c >= 0 && c < g.vl;
  const bf16* row = g.x[rank] + i * g.vl;
  const RowKeys keys(RowLoad{row, mine ? c : -1, g.boost}, g.vl);
  const int64_t at = (rank * g.n + i) * g.stride;
  kf::warp_topk_record(keys, g.kr, [&](int64_t s, float v) {
    for (int r = 0; r < world; ++r) g.out[r][at + s] = v;
  });
  if (threadIdx.x % 32 == 0) {
    const float label = mine ? __bfloat162float(row[c]) + g.boost : NAN;
    for (int r = 0; r < world; ++r) g.out[r][at + kf::topk_record_floats(g.kr)] = label;
  }
}

// Token i from the world records in our staging, merged in rank order.
__device__ float merge_score(const globals& g, int64_t i) {
  const int world = g.sig.world;
  const float* recs = g.stage + i * g.stride;
  const int64_t rank_stride = g.n * g.stride;
  const auto all = kf::topk_union<config::kCached>(recs, rank_stride, world, g.kr);
  const kf::TopkCut cut = kf::warp_topk_merge(all, recs, rank_stride, world, g.kr, g.k);
  float zc = NAN;  // the label's owner's value; the others hold NaN
  for (int r = 0; r < world; ++r) {
    const float v = recs[r * rank_stride + kf::topk_record_floats(g.kr)];
    if (!isnan(v)) zc = v;
  }
  return score(all, cut, zc, g.top_p);
}

__global__ void __launch_bounds__(config::kThreads) topk(const __grid_constant__ globals g) {
  kf::barrier(g.sig, config::kFirst + blockIdx.x, g.epoch);  // targets ready, staging free
  for (int64_t i = first_token(); i < g.n; i += token_step()) push_record(g, i);
  kf::barrier(g.sig, config::kSecond + blockIdx.x, g.epoch);  // our tokens' records are here
  for (int64_t i = first_token(); i < g.n; i += token_step()) {
    const float lp = merge_score(g, i);
    if (threadIdx.x % 32 == 0) g.logp[i] = lp;
  }
}

static kf::SignalSet g_sig;
static void* g_scratch = nullptr;  // pull: [T][V] bf16 rows; topk: [world][N][stride] floats

static int64_t record_stride(int64_t k, int64_t vl) {
  return kf::topk_record_floats(k < vl ? k : vl) + 1;  // the record, then the label's value
}

}  // namespace vp_topk

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  using namespace vp_topk;
  const kf::Tensor& logits = t["logits"];
  const int64_t n = logits.shape[0] * logits.shape[1], vl = logits.shape[2];
  g_sig = kf::make_signals(comm, config::kSlots);
  const size_t bytes =
      config::kAlgo == algo::pull
          ? static_cast<size_t>(n * vl) * sizeof(bf16)  // T * V = N * vl
          : static_cast<size_t>(comm.world * n * record_stride(t.iparam("top_k", 10), vl)) *
                sizeof(float);
  g_scratch = comm.alloc(bytes);
  return g_sig.local && g_scratch ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  using namespace vp_topk;
  const kf::Tensor& logits = t["logits"];
  globals g{};
  g.sig = g_sig;
  g.x = kf::peers(comm, logits.ptr<const bf16>());
  g.target = kf::peers(comm, t["target"].ptr<const int64_t>());
  g.logp = t["logp"].ptr<float>();
  g.out = config::kAlgo == algo::pull ? kf::peers(comm, g.logp)
                                      : kf::peers(comm, static_cast<float*>(g_scratch));
  g.rows = static_cast<bf16*>(g_scratch);
  g.stage = static_cast<const float*>(g_scratch);
  g.n = logits.shape[0] * logits.shape[1];
  g.vl = logits.shape[2];
  g.per_rank = g.n / comm.world;
  g.k = t.iparam("top_k", 10);
  g.kr = g.k < g.vl ? g.k : g.vl;
  g.stride = record_stride(g.k, g.vl);
  g.top_p = static_cast<float>(t.param("top_p", 0.9));
  g.boost = static_cast<float>(t.param("boost", 8));
  g.epoch = kf::next_epoch();
  cudaStream_t st = comm.stream();
  if (comm.world == 1) {
    solo<<<kf::grid_for(g.n, config::kWarps, config::kSoloBlocks), config::kThreads, 0, st>>>(g);
  } else if (config::kAlgo == algo::pull) {
    pull<<<kf::grid_for(g.per_rank, config::kWarps, config::kMaxBlocks), config::kThreads, 0, st>>>(
        g);
  } else {
    topk<<<kf::grid_for(g.n, config::kWarps, config::kMaxBlocks), config::kThreads, 0, st>>>(g);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
