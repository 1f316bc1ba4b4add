// moe_dispatch, expert kernel on kf/: route, permute, all-to-all and regroup in ONE kernel,
// each routed row read once from x and written straight into its slot of the
// destination's y (no permuted matrix P, no receive buffer, no separate regroup pass).
//
// Ownership: block b owns tokens [t0, t1) (kf::split of M; the same split on every rank).
// Routing needs the whole rank's view (a pair's position counts the pairs of every token
// before it), and a block never waits for another block of its own rank, so every block
// recomputes it from the logits (M * E floats, L2-resident): (1) per-expert pair counts over
// all tokens and over the tokens before t0 (topk selections, warp-aggregated smem atomics);
// (2) an exclusive scan of the counts: the first position of each expert, plus the pairs
// of tokens before t0 = the first position this block fills for each expert; (3) per tile
// of its tokens, one block-wide scan per expert numbers the tile's pairs in token order.
// That gives perm, routing_map and each pair's destination (rank d, row of y(d)).
// (4) Push: each x row is loaded once (16-byte vectors, kUnroll in flight per thread) and
// stored to its topk destinations: posted remote stores, no round trip.
//
// Barriers (world > 1; none at world 1, where nothing leaves the rank): block b's entry
// barrier before its first remote store (every peer has entered this call, so its y is
// this call's poisoned buffer and no longer read by the harness); block b's exit barrier
// after its last store. A rank's kernel ends only when each of its blocks b has seen
// block b of every rank pass the exit barrier, i.e. after every store into our y landed.
// Peers never read our x, logits, perm or routing_map, so nothing else is protected.
// Slots per block, epoch per call: no reset.
#include <kf/kf.cuh>
#include <kf/route.cuh>  // block_scan, the MoE top-k order, moe_expert_starts

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped).
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 512  // threads per block, a multiple of 32
#endif

namespace moe_dispatch {

using bf16 = __nv_bfloat16;

struct config {
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kStart = 0;         // slots [0, kMaxBlocks): entry barrier
  static constexpr int kEnd = kMaxBlocks;  // slots [kMaxBlocks, 2 kMaxBlocks): exit
  static constexpr int kSlots = 2 * kMaxBlocks;
  static constexpr int kMaxPairs = 2048;  // (token, expert) pairs of one tile in smem
  static constexpr int kUnroll = 8;       // 16-byte loads in flight per thread
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "KF_THREADS: a multiple of 32");
};

struct globals {
  kf::SignalSet sig;
  const uint4* x;       // [M, vecs]
  const float* logits;  // [M, E]
  kf::Peers<uint4> y;   // y[d]: rank d's output, [world * S(d), vecs]
  int32_t* perm;        // [R]
  uint8_t* map;         // [E, M]
  int64_t m, vecs;      // tokens, 16-byte vectors per row
  int e, topk, local;   // experts, experts per token, experts per rank (L)
  int tile;             // tokens per tile: tile * topk pairs fit the smem record
  int64_t rows, q;      // R = M * topk, floor(R / world)
  uint32_t epoch;
};

// Where pair position p of this rank goes: rank *d, row *row of y(d) (SPLITS, LOCAL EXPERTS).
__device__ __forceinline__ void destination(const globals& g, int64_t p, int* d, int* row) {
  const int64_t w = g.sig.world, dd = min(p / g.q, w - 1), i = p - dd * g.q;
  const int64_t size = dd == w - 1 ? g.rows - (w - 1) * g.q : g.q, c = size / g.local;
  const int64_t l = min(i / c, static_cast<int64_t>(g.local - 1));
  const int64_t sub = l == g.local - 1 ? size - (g.local - 1) * c : c;
  *d = static_cast<int>(dd);
  *row = static_cast<int>(w * l * c + g.sig.rank * sub + (i - l * c));
}

// (3): for tokens [tb, tb + count): routing_map, perm, and each pair's destination in
// dst/row[lt * topk + k] (k-th expert of the token in expert order).
__device__ void number_tile(const globals& g, int64_t tb, int count, int* next, int* wsum, int* dst,
                            int* row) {
  const int lt = threadIdx.x;
  const bool valid = lt < count;
  const int64_t t = tb + lt;
  const float* lrow = g.logits + t * g.e;
  int slot = 0;
  for (int x = 0; x < g.e; ++x) {
    const bool f = valid && kf::moe_chosen(lrow, g.e, x, g.topk);
    if (valid) g.map[x * g.m + t] = f ? 1 : 0;
    const int n0 = next[x];  // read before the scan's barriers; written after them
    int total;
    const int ex = kf::block_scan<config::kWarps>(f, wsum, &total);
    if (f) {
      const int p = n0 + ex;
      g.perm[p] = static_cast<int32_t>(t);
      destination(g, p, &dst[lt * g.topk + slot], &row[lt * g.topk + slot]);
      ++slot;
    }
    if (threadIdx.x == 0) next[x] = n0 + total;
  }
  __syncthreads();
}

// (4): every row of the tile, loaded once, stored to its topk destinations.
__device__ void push_tile(const globals& g, int64_t tb, int count, const int* dst, const int* row) {
  const int64_t items = count * g.vecs;
  constexpr int U = config::kUnroll;
  for (int64_t i0 = threadIdx.x; i0 < items; i0 += U * blockDim.x) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t i = i0 + u * blockDim.x;
      if (i < items) v[u] = kf::ld16_stream(g.x + tb * g.vecs + i);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t i = i0 + u * blockDim.x;
      if (i >= items) break;
      const int64_t lt = i / g.vecs, c = i - lt * g.vecs;
      for (int k = 0; k < g.topk; ++k) {
        const int pr = static_cast<int>(lt) * g.topk + k;
        kf::st16(g.y[dst[pr]] + static_cast<int64_t>(row[pr]) * g.vecs + c, v[u]);
      }
    }
  }
}

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  extern __shared__ int smem[];
  __shared__ int wsum[config::kWarps];
  int* cnt = smem;                   // [E]
  int* next = cnt + g.e;             // [E]
  int* dst = next + g.e;             // [tile * topk]
  int* row = dst + g.tile * g.topk;  // [tile * topk]
  const kf::Range mine = kf::split(g.m, gridDim.x, blockIdx.x);
  kf::moe_expert_starts(g.logits, g.m, g.e, g.topk, mine.begin, cnt, next);  // (1) + (2)
  const bool peers = g.sig.world > 1;
  if (peers) kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);  // peers' y writable
  for (int64_t tb = mine.begin; tb < mine.end; tb += g.tile) {
    const int count = static_cast<int>(kf::min64(g.tile, mine.end - tb));
    number_tile(g, tb, count, next, wsum, dst, row);
    push_tile(g, tb, count, dst, row);
    __syncthreads();  // dst/row are rewritten by the next tile
  }
  if (peers) kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);  // our y is complete
}

static kf::SignalSet g_sig;

}  // namespace moe_dispatch

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& /*t*/) {
  moe_dispatch::g_sig = kf::make_signals(comm, moe_dispatch::config::kSlots);
  return moe_dispatch::g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  using namespace moe_dispatch;
  const kf::Tensor& x = t["x"];
  globals g{};
  g.sig = g_sig;
  g.x = x.ptr<const uint4>();
  g.logits = t["logits"].ptr<const float>();
  g.y = kf::peers(comm, t["y"].ptr<uint4>());
  g.perm = t["perm"].ptr<int32_t>();
  g.map = t["routing_map"].ptr<uint8_t>();
  g.m = x.shape[0];
  g.vecs = x.shape[1] / 8;
  g.e = static_cast<int>(t.iparam("E"));
  g.topk = static_cast<int>(t.iparam("topk"));
  g.local = g.e / comm.world;
  g.tile = static_cast<int>(kf::min64(config::kThreads, kf::ceil_div(config::kMaxPairs, g.topk)));
  g.rows = g.m * g.topk;
  g.q = g.rows / comm.world;
  g.epoch = kf::next_epoch();
  // The same grid on every rank (M and N are), at most one block per token.
  const int blocks = static_cast<int>(
      kf::min64(kf::grid_for(g.m * g.vecs, config::kThreads, config::kMaxBlocks), g.m));
  const size_t smem = sizeof(int) * (2 * static_cast<size_t>(g.e) + 2 * g.tile * g.topk);
  if (smem > 48 * 1024 && cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(smem)) != cudaSuccess)
    return 1;
  kernel<<<blocks, config::kThreads, smem, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
