// gemm_all_reduce, expert kernel on kf/: c(every rank) = sum over s of a(s) @ b(s), in one
// kernel whose matrix product overlaps its communication.
//
// Each block computes BM x BN tiles of our partial product P = a @ b (kf::TileGemm, bf16
// tensor cores, fp32 accumulators), rounds a finished tile to bf16 (torch.matmul's
// output) in shared memory and has one thread push it with TMA bulk stores while the
// block's warps go on to the next tile (intra-SM, as gemm_reduce_scatter: the producer of
// a tile is its only sender). Tile t goes to block t % grid on every rank, so block b's
// barrier slot pairs exactly the writers and the readers of tile t.
//
// one_shot: every tile goes to slot `rank` of every rank's workspace; after one barrier
// each rank sums the world slots of its tiles in rank order (fp32) into its own c.
// (w-1) partials leave each rank, one hop, one barrier.
// two_shot: rank o owns a contiguous range of tiles. Each tile goes to its owner only
// (peers' tiles first, ours last); after a barrier the owner sums the slots of its tiles
// and stores the sum into every rank's c, then an exit barrier. 2(w-1)/w partials leave
// each rank in two hops, two barriers. automatic picks by vLLM's rule (kf::allreduce_one_shot).
//
// Workspace: a slot holds tiles packed (tile t's rows x cols contiguous, tiles in order),
// so it is exactly as large as what it holds and every tile is one bulk store.
// one_shot has no entry and no exit barrier: its workspace has two halves used by
// alternate calls (the epoch's parity). We write half e%2 of a peer in call e only after
// our call e-1 barrier saw that peer's call e-1 signal, so the peer's call e-2 kernel, the
// last reader of that half, has finished; peers never touch our a, b or c.
// two_shot writes peers' c, so it needs the exit barrier anyway, and that barrier makes
// one half enough: a peer writes our slots in call e+1 only after its call e kernel ended,
// which waited for our call e exit signal, given after we summed our slots. The first
// barrier proves the peers entered this call, so their c may be written.
// World 1: the tile goes straight into c; no barrier.
#include <algorithm>
#include <kf/gemm.cuh>
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped). 64 x 128 tiles make 128 tiles of PKB's 1024 x 1024
// product: one wave on the 132 SMs of an H100.
#ifndef KF_ALGO
#define KF_ALGO automatic  // automatic (vLLM's rule) | one_shot | two_shot
#endif
#ifndef KF_BM
#define KF_BM 64  // tile rows, a multiple of 32
#endif
#ifndef KF_BN
#define KF_BN 128  // tile columns, a multiple of 32
#endif
#ifndef KF_BK
#define KF_BK 32  // k per pipeline stage, a multiple of 16
#endif
#ifndef KF_STAGES
#define KF_STAGES 3  // cp.async pipeline depth
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 132  // grid maximum (also capped by what fits on the GPU at once)
#endif

namespace gemm_ar {

using bf16 = __nv_bfloat16;

enum class algo { automatic, one_shot, two_shot };

struct config {
  using Tile = kf::TileGemm<KF_BM, KF_BN, KF_BK, 2, 2, KF_STAGES>;
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kBM = KF_BM, kBN = KF_BN;
  static constexpr int kThreads = Tile::kThreads;
  static constexpr int kTileBytes = kBM * kBN * 2;  // one bf16 tile: one TMA store
  static constexpr size_t kSmem = Tile::kSmemBytes + kTileBytes;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kMid = 0;           // slots [0, kMaxBlocks): every tile pushed
  static constexpr int kEnd = kMaxBlocks;  // [kMaxBlocks, 2 kMaxBlocks): two_shot's exit
  static constexpr int kSlots = 2 * kMaxBlocks;
};

struct globals {
  kf::SignalSet sig;
  const bf16* a;       // [M, K]
  const bf16* b;       // [K, N]
  kf::Peers<bf16> c;   // c[r]: rank r's output [M, N]
  kf::Peers<bf16> ws;  // ws[r]: this call's half of rank r's workspace, [world][slot]
  int64_t m, n, k;
  int64_t slot;  // elements of one slot
  int tiles_n, tiles;
  uint32_t epoch;
  bool one_shot;
};

// The first index >= base that is congruent to block b modulo the grid.
__device__ __forceinline__ int64_t first_of(int64_t base, int b, int grid) {
  return base + ((b - base % grid) % grid + grid) % grid;
}

// Where tile t starts in the packed layout of the whole [M, N] product: its row band
// starts at row0 * N and holds the band's tiles (rows x cols each) one after another.
// t == tiles gives M * N. Every offset is a multiple of 8 elements (N and BN are).
__host__ __device__ __forceinline__ int64_t packed_offset(int64_t m, int64_t n, int tiles_n,
                                                          int64_t t) {
  const int64_t row0 = t / tiles_n * config::kBM, col0 = t % tiles_n * config::kBN;
  if (row0 >= m) return m * n;
  return row0 * n + kf::min64(config::kBM, m - row0) * col0;
}

// The tiles rank o owns under two_shot (all of them under one_shot, as every rank sums all).
__host__ __device__ __forceinline__ kf::Range owned(int tiles, int world, int o, bool one_shot) {
  return one_shot ? kf::Range{0, tiles} : kf::split(tiles, world, o);
}

// Where rank o's slots start in the packed layout (its first owned tile).
__device__ __forceinline__ int64_t slot_base(const globals& g, int o) {
  if (g.one_shot) return 0;
  return packed_offset(g.m, g.n, g.tiles_n, owned(g.tiles, g.sig.world, o, false).begin);
}

struct TilePos {
  int64_t row0, col0, off;  // off: packed offset
  int rows, cols;
};
__device__ __forceinline__ TilePos tile_pos(const globals& g, int64_t t) {
  TilePos p;
  p.row0 = t / g.tiles_n * config::kBM;
  p.col0 = t % g.tiles_n * config::kBN;
  p.rows = static_cast<int>(kf::min64(config::kBM, g.m - p.row0));
  p.cols = static_cast<int>(kf::min64(config::kBN, g.n - p.col0));
  p.off = p.row0 * g.n + p.rows * p.col0;
  return p;
}

// Rounds the fp32 tile to bf16 into `stage`, packed (rows x cols), and has thread 0 push
// it into slot `rank` of rank `dst`'s workspace, or of every rank's when dst < 0 (peers
// from the next rank on, ourselves last, so every rank starts on a different link). The
// stores run on while the block computes its next tile.
__device__ void push_tile(const globals& g, const TilePos& p, const float* cs, bf16* stage,
                          int dst) {
  const int chunks = p.cols / 8, w = g.sig.world, me = g.sig.rank;
  if (threadIdx.x == 0) kf::tma_wait_read<0>();  // the last push has read `stage`
  __syncthreads();
  for (int q = threadIdx.x; q < p.rows * chunks; q += blockDim.x) {
    const int r = q / chunks, cc = q % chunks * 8;
    *reinterpret_cast<uint4*>(stage + r * p.cols + cc) =
        kf::pack_bf16x8(cs + r * config::Tile::kLdC + cc);
  }
  kf::fence_proxy_async_smem();  // our generic stores, before the async proxy reads them
  __syncthreads();
  if (threadIdx.x == 0) {
    const uint32_t bytes = static_cast<uint32_t>(p.rows * p.cols * 2);
    for (int k = 1; k <= (dst < 0 ? w : 1); ++k) {
      const int d = dst < 0 ? (me + k) % w : dst;
      kf::tma_store(g.ws[d] + me * g.slot + p.off - slot_base(g, d), stage, bytes);
    }
    kf::tma_commit();
  }
}

// Phase 1: every tile of our partial product, pushed where it is summed.
__device__ void compute_and_push(const globals& g, char* smem) {
  bf16* stage = reinterpret_cast<bf16*>(smem + config::Tile::kSmemBytes);
  const int w = g.sig.world, me = g.sig.rank;
  config::Tile tile;
  // one_shot: one pass over all tiles, each to every rank; two_shot: owner by owner.
  for (int k = g.one_shot ? w : 1; k <= w; ++k) {
    const int o = (me + k) % w;
    const kf::Range own = owned(g.tiles, w, o, g.one_shot);
    for (int64_t t = first_of(own.begin, blockIdx.x, gridDim.x); t < own.end; t += gridDim.x) {
      const TilePos p = tile_pos(g, t);
      tile.zero();
      tile.mma(smem, g.a + p.row0 * g.k, g.k, g.b + p.col0, g.n, p.rows, p.cols, g.k);
      const float* cs = tile.stage_f32(smem);
      if (w == 1)
        kf::store_tile_bf16(g.c[me] + p.row0 * g.n + p.col0, g.n, cs, config::Tile::kLdC, p.rows,
                            p.cols);
      else
        push_tile(g, p, cs, stage, g.one_shot ? -1 : o);
    }
  }
}

// Phase 2: the world slots of tile t summed in rank order in fp32, into our c
// (one_shot) or into every rank's c (two_shot; peers from the next rank on).
__device__ void sum_tile(const globals& g, int64_t t) {
  const TilePos p = tile_pos(g, t);
  const int w = g.sig.world, me = g.sig.rank;
  const bf16* mine = g.ws[me] + p.off - slot_base(g, me);
  const int chunks = p.cols / 8;
  for (int q = threadIdx.x; q < p.rows * chunks; q += blockDim.x) {
    kf::Acc<bf16> acc;
    acc.zero();
    for (int s = 0; s < w; ++s) acc.add(kf::ld16_stream(mine + s * g.slot + q * 8));
    const uint4 v = acc.pack();
    const int64_t at = (p.row0 + q / chunks) * g.n + p.col0 + q % chunks * 8;
    if (g.one_shot)
      kf::st16(g.c[me] + at, v);
    else
      for (int k = 1; k <= w; ++k) kf::st16(g.c[(me + k) % w] + at, v);
  }
}

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  extern __shared__ __align__(128) char smem[];
  compute_and_push(g, smem);
  if (g.sig.world == 1) return;
  if (threadIdx.x == 0) kf::tma_flush_for_peers();  // every push landed, then the signal
  kf::barrier(g.sig, config::kMid + blockIdx.x, g.epoch);
  const kf::Range own = owned(g.tiles, g.sig.world, g.sig.rank, g.one_shot);
  for (int64_t t = first_of(own.begin, blockIdx.x, gridDim.x); t < own.end; t += gridDim.x)
    sum_tile(g, t);
  if (!g.one_shot) kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);  // c is whole
}

// Set in kf_setup for the shapes it was given.
static kf::SignalSet g_sig;
static bf16* g_ws = nullptr;  // one_shot: [2 halves][world][M * N]; two_shot: [world][slot]
static int64_t g_slot = 0;    // elements of one slot
static bool g_one_shot = true;
static int g_max_blocks = 0;
static int64_t g_m = 0, g_n = 0, g_k = 0;

int setup(kf::Comm& comm, const kf::Tensor& A, const kf::Tensor& B, const kf::Tensor& C) {
  g_m = A.shape[0], g_k = A.shape[1], g_n = B.shape[1];
  const int w = comm.world;
  const int tiles_n = static_cast<int>(kf::ceil_div(g_n, config::kBN));
  const int tiles = static_cast<int>(kf::ceil_div(g_m, config::kBM)) * tiles_n;
  g_one_shot = config::kAlgo == algo::automatic ? kf::allreduce_one_shot(C.bytes(), w)
                                                : config::kAlgo == algo::one_shot;
  g_sig = kf::make_signals(comm, config::kSlots);
  if (!g_sig.local) return 1;
  if (w > 1) {
    g_slot = g_one_shot ? g_m * g_n : 0;
    for (int o = 0; !g_one_shot && o < w; ++o) {  // the largest owner's packed tiles
      const kf::Range own = owned(tiles, w, o, false);
      g_slot = std::max(g_slot, packed_offset(g_m, g_n, tiles_n, own.end) -
                                    packed_offset(g_m, g_n, tiles_n, own.begin));
    }
    g_slot = std::max<int64_t>(g_slot, 8);
    const int64_t halves = g_one_shot ? 2 : 1;
    g_ws = static_cast<bf16*>(comm.alloc(halves * w * g_slot * sizeof(bf16)));
    if (!g_ws) return 1;
  }
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(config::kSmem)) != cudaSuccess)
    return 1;
  // The barriers pair block b of every rank: the grid must run at once (and be the same
  // on every rank, which the shared device type and shapes make it).
  g_max_blocks = static_cast<int>(kf::min64(
      config::kMaxBlocks, kf::max_coresident_blocks(kernel, config::kThreads, config::kSmem)));
  return g_max_blocks > 0 ? 0 : 1;
}

int run(kf::Comm& comm, const kf::Tensor& A, const kf::Tensor& B, kf::Tensor& C) {
  if (A.shape[0] != g_m || A.shape[1] != g_k || B.shape[1] != g_n) return 1;  // not setup's
  globals g{};
  g.sig = g_sig;
  g.a = A.ptr<const bf16>();
  g.b = B.ptr<const bf16>();
  g.c = kf::peers(comm, C.ptr<bf16>());
  g.m = g_m;
  g.n = g_n;
  g.k = g_k;
  g.slot = g_slot;
  g.tiles_n = static_cast<int>(kf::ceil_div(g_n, config::kBN));
  g.tiles = static_cast<int>(kf::ceil_div(g_m, config::kBM)) * g.tiles_n;
  g.epoch = kf::next_epoch();
  g.one_shot = g_one_shot;
  if (comm.world > 1) {
    const int64_t half = g_one_shot ? (g.epoch & 1u) * comm.world * g_slot : 0;
    g.ws = kf::peers(comm, g_ws + half);
  }
  const int blocks = static_cast<int>(kf::min64(g.tiles, g_max_blocks));
  kernel<<<blocks, config::kThreads, config::kSmem, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace gemm_ar

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  return gemm_ar::setup(comm, t["a"], t["b"], t["c"]);
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return gemm_ar::run(comm, t["a"], t["b"], t["c"]);
}
