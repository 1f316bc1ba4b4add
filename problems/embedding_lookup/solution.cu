// embedding_lookup, expert kernel on kf/: y(rank r) = the rows its indices name, grouped by
// owner rank (a stable counting sort by owner), in ONE kernel with no index all-to-all
// and no host round trip: whoever moves a row computes its slot of y from the indices.
//
// Index i's slot is p(i) = #{j : o(j) < o(i)} + #{j < i : o(j) = o(i)}, o = index / rows.
// Block b owns indices [i0, i1) (kf::split of n; the same split on every rank). A block
// never waits for another block of its own rank, so each one counts, over all n indices,
// the owners' totals and those before i0 (warp-aggregated smem atomics), scans them into
// the first slot of each owner in this block, and numbers a tile of its indices with one
// block-wide scan per owner.
// pull (default): rank r numbers its own indices and copies each row from its owner's
//   table into its slot of our y (kUnroll 16-byte loads in flight per thread: a remote
//   load waits a link round trip).
// push: owner r reads every rank s's indices, numbers those it owns (the slots of owners
//   below r come first) and stores its rows into s's y: posted stores, but every rank's
//   indices are read by every owner.
//
// Barriers (world > 1; none at world 1): block b's entry barrier before its first remote
// access (every peer has entered: its table and indices are this call's, its y is poisoned
// and writable); block b's exit barrier after its last one. A rank's kernel ends only when
// each of its blocks b has seen block b of every rank pass the exit barrier: every read of
// our table (pull) or indices (push) is over and every row of our y has landed (push).
// Slots per block, epoch per call: no reset.
#include <kf/kf.cuh>
#include <kf/route.cuh>  // block_scan

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped).
#ifndef KF_ALGO
#define KF_ALGO pull  // pull | push
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 512  // threads per block, a multiple of 32
#endif

namespace embedding_lookup {

enum class algo { pull, push };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kStart = 0;         // slots [0, kMaxBlocks): entry barrier
  static constexpr int kEnd = kMaxBlocks;  // slots [kMaxBlocks, 2 kMaxBlocks): exit
  static constexpr int kSlots = 2 * kMaxBlocks;
  static constexpr int kUnroll = 8;  // 16-byte loads in flight per thread
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "KF_THREADS: a multiple of 32");
};

struct globals {
  kf::SignalSet sig;
  kf::Peers<const int64_t> idx;  // idx[s]: rank s's indices, [n]
  kf::Peers<const uint4> table;  // table[o]: rank o's shard, [rows, vecs]
  kf::Peers<uint4> y;            // y[s]: rank s's output, [n, vecs]
  int64_t n, rows, vecs;
  uint32_t epoch;
};

// A tile's records: row src_row of table(src) goes to row dst_row of y(dst).
struct Tile {
  int src[config::kThreads];
  int dst[config::kThreads];
  int64_t src_row[config::kThreads];
  int64_t dst_row[config::kThreads];
};

// Copy `count` rows as the tile's records say, every thread's loads of a batch in flight.
__device__ void move_rows(const globals& g, const Tile& tl, int count) {
  const int64_t items = count * g.vecs;
  constexpr int U = config::kUnroll;
  for (int64_t i0 = threadIdx.x; i0 < items; i0 += U * blockDim.x) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t i = i0 + u * blockDim.x;
      if (i >= items) break;
      const int64_t r = i / g.vecs, c = i - r * g.vecs;
      v[u] = kf::ld16_stream(g.table[tl.src[r]] + tl.src_row[r] * g.vecs + c);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t i = i0 + u * blockDim.x;
      if (i >= items) break;
      const int64_t r = i / g.vecs, c = i - r * g.vecs;
      kf::st16(g.y[tl.dst[r]] + tl.dst_row[r] * g.vecs + c, v[u]);
    }
  }
}

// pull: next[o] = the first slot of owner o's rows among our indices >= i0.
__device__ void owner_starts(const globals& g, const int64_t* idx, int64_t i0, int* next) {
  __shared__ int cnt[kf::kMaxWorld];
  const int w = g.sig.world;
  for (int o = threadIdx.x; o < w; o += blockDim.x) cnt[o] = 0, next[o] = 0;
  __syncthreads();
  for (int64_t base = 0; base < g.n; base += blockDim.x) {  // uniform trip count
    const int64_t j = base + threadIdx.x;
    const bool valid = j < g.n;
    const int o = valid ? static_cast<int>(idx[j] / g.rows) : -1;
    const int key = valid ? 2 * o + (j < i0) : -1;  // one leader per (owner, before i0)
    const unsigned same = __match_any_sync(0xffffffffu, key);
    if (valid && kf::lane_id() == __ffs(same) - 1) {
      atomicAdd(&cnt[o], __popc(same));
      if (j < i0) atomicAdd(&next[o], __popc(same));
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int run = 0;
    for (int o = 0; o < w; ++o) next[o] += run, run += cnt[o];
  }
  __syncthreads();
}

__device__ void pull(const globals& g, kf::Range mine, Tile& tl, int* next, int* wsum) {
  const int64_t* idx = g.idx[g.sig.rank];
  owner_starts(g, idx, mine.begin, next);
  if (g.sig.world > 1) kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);  // tables
  for (int64_t tb = mine.begin; tb < mine.end; tb += blockDim.x) {
    const int count = static_cast<int>(kf::min64(blockDim.x, mine.end - tb));
    const bool valid = static_cast<int>(threadIdx.x) < count;
    const int64_t v = valid ? idx[tb + threadIdx.x] : 0;
    const int mine_o = static_cast<int>(v / g.rows);
    for (int o = 0; o < g.sig.world; ++o) {
      const bool f = valid && mine_o == o;
      const int n0 = next[o];  // read before the scan's barriers; written after them
      int total;
      const int ex = kf::block_scan<config::kWarps>(f, wsum, &total);
      if (f) {
        tl.src[threadIdx.x] = o, tl.src_row[threadIdx.x] = v - o * g.rows;
        tl.dst[threadIdx.x] = g.sig.rank, tl.dst_row[threadIdx.x] = n0 + ex;
      }
      if (threadIdx.x == 0) next[o] = n0 + total;
    }
    __syncthreads();
    move_rows(g, tl, count);
    __syncthreads();  // the records are rewritten by the next tile
  }
}

// push: the rows we own of rank s's indices [i0, i1), into s's y.
__device__ void push_to(const globals& g, int s, kf::Range mine, Tile& tl, int* wsum) {
  const int64_t* idx = g.idx[s];
  const int64_t lo = g.sig.rank * g.rows, hi = lo + g.rows;  // the global rows we own
  __shared__ unsigned long long start;  // s's slots of owners below us + ours before i0
  __syncthreads();                      // the last destination's readers of start are done
  if (threadIdx.x == 0) start = 0;
  __syncthreads();
  for (int64_t base = 0; base < g.n; base += blockDim.x) {  // uniform trip count
    const int64_t j = base + threadIdx.x;
    const int64_t v = j < g.n ? idx[j] : hi;
    const bool f = v < lo || (j < mine.begin && v < hi);
    const unsigned b = __ballot_sync(0xffffffffu, f);
    if (kf::lane_id() == 0 && b) atomicAdd(&start, static_cast<unsigned long long>(__popc(b)));
  }
  __syncthreads();
  int64_t next = static_cast<int64_t>(start);
  for (int64_t tb = mine.begin; tb < mine.end; tb += blockDim.x) {
    const int count = static_cast<int>(kf::min64(blockDim.x, mine.end - tb));
    const int64_t v = static_cast<int>(threadIdx.x) < count ? idx[tb + threadIdx.x] : hi;
    const bool f = v >= lo && v < hi;
    int total;
    const int ex = kf::block_scan<config::kWarps>(f, wsum, &total);
    // Compact the tile's rows of ours to the front of the records.
    if (f) {
      tl.src[ex] = g.sig.rank, tl.src_row[ex] = v - lo;
      tl.dst[ex] = s, tl.dst_row[ex] = next + ex;
    }
    next += total;
    __syncthreads();
    move_rows(g, tl, total);
    __syncthreads();  // the records are rewritten by the next tile
  }
}

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  __shared__ Tile tl;
  __shared__ int next[kf::kMaxWorld];
  __shared__ int wsum[config::kWarps];
  const kf::Range mine = kf::split(g.n, gridDim.x, blockIdx.x);
  const bool peers = g.sig.world > 1;
  if (config::kAlgo == algo::pull) {
    pull(g, mine, tl, next, wsum);
  } else {
    if (peers) kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);  // indices, y ready
    for (int k = 1; k <= g.sig.world; ++k)                                // peers first, ours last
      push_to(g, (g.sig.rank + k) % g.sig.world, mine, tl, wsum);
  }
  if (peers) kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);  // all reads, rows done
}

static kf::SignalSet g_sig;

}  // namespace embedding_lookup

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& /*t*/) {
  embedding_lookup::g_sig = kf::make_signals(comm, embedding_lookup::config::kSlots);
  return embedding_lookup::g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  using namespace embedding_lookup;
  const kf::Tensor& table = t["table"];
  globals g{};
  g.sig = g_sig;
  g.idx = kf::peers(comm, t["indices"].ptr<const int64_t>());
  g.table = kf::peers(comm, table.ptr<const uint4>());
  g.y = kf::peers(comm, t["y"].ptr<uint4>());
  g.n = t["indices"].numel;
  g.rows = table.shape[0];
  g.vecs = table.shape[1] / 8;
  g.epoch = kf::next_epoch();
  // The same grid on every rank (n and dim are), at most one block per index.
  const int blocks = static_cast<int>(
      kf::min64(kf::grid_for(g.n * g.vecs, config::kThreads, config::kMaxBlocks), g.n));
  kernel<<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
