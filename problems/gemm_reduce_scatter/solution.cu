// gemm_reduce_scatter, expert kernel on kf/: c(rank r) = rows of owner r of sum over s of
// a(s) @ b(s), in one kernel whose matrix product overlaps its communication.
//
// Intra-SM overlap (ParallelKittens' GEMM + reduce-scatter schedule, 1.2x faster than
// inter-SM there): each block computes BM x BN tiles of our partial product P = a @ b
// (kf::TileGemm, bf16 tensor cores, fp32 accumulators), rounds a finished tile to bf16
// in shared memory and has one thread push it with a TMA bulk store into the tile's
// owner's workspace, slot `rank`, while the block's warps go on to the next tile: the
// copy engine of the SM drains the tile over NVLink during the next tile's math, and no
// register holds data in flight. Tiles never straddle owners (each owner's M/world rows
// are tiled on their own), peers' tiles come first and our own last, and every rank
// starts at a different owner, so the links are busy from the first tile on.
//
// Reduction: after one barrier (every block b on every rank has pushed its tiles), block
// b sums, for the tiles of our rows it owns, the world slots in rank order in fp32 and
// writes c. Tile t goes to the same block on every rank, so block b's barrier is exactly
// the set of writers of what block b reads.
//
// No entry barrier: the workspace has two halves used by alternate calls (the epoch's
// parity). A rank writes half e%2 of a peer in call e only after passing call e-1's
// barrier, which the peer's call e-1 kernel signalled, so the peer's call e-2 kernel, the
// last reader of that half, has finished (kernels on one stream run in order). Peers
// never read our a, b or c, so there is no exit barrier either: one barrier per call, none
// at world 1, where the epilogue writes c directly.
#include <kf/gemm.cuh>
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped). 64 x 128 tiles make 128 tiles of PKB's 1024 x 1024
// product: one wave on the 132 SMs of an H200 at world 1.
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

namespace gemm_rs {

using bf16 = __nv_bfloat16;

struct config {
  using Tile = kf::TileGemm<KF_BM, KF_BN, KF_BK, 2, 2, KF_STAGES>;
  static constexpr int kBM = KF_BM, kBN = KF_BN;
  static constexpr int kThreads = Tile::kThreads;
  static constexpr int kTileElems = kBM * kBN;
  static constexpr int kTileBytes = kTileElems * 2;  // one bf16 tile: one TMA store
  static constexpr size_t kSmem = Tile::kSmemBytes + kTileBytes;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kMid = 0;  // barrier slots kMid + block
  static constexpr int kSlots = kMaxBlocks;
};

struct globals {
  kf::SignalSet sig;
  const bf16* a;       // [M, Kl]
  const bf16* b;       // [Kl, N]
  bf16* c;             // [M / world, N]
  kf::Peers<bf16> ws;  // ws[o]: this call's half of rank o's workspace, [world][tiles][tile]
  int64_t rows;        // M / world: the rows of each owner
  int64_t n, kl;
  int tiles_m, tiles_n;  // tiles of one owner's rows
  uint32_t epoch;
};

// The first index >= base that is congruent to block b modulo the grid.
__device__ __forceinline__ int64_t first_of(int64_t base, int b, int grid) {
  return base + ((b - base % grid) % grid + grid) % grid;
}

// Tile t of owner o: row offset within the owner's rows, column offset, valid extent.
struct TilePos {
  int64_t row0, col0;
  int rows, cols;
};
__device__ __forceinline__ TilePos tile_pos(const globals& g, int64_t t) {
  TilePos p;
  p.row0 = t / g.tiles_n * config::kBM;
  p.col0 = t % g.tiles_n * config::kBN;
  p.rows = static_cast<int>(kf::min64(config::kBM, g.rows - p.row0));
  p.cols = static_cast<int>(kf::min64(config::kBN, g.n - p.col0));
  return p;
}

// Rounds the fp32 tile to bf16 into `stage` (the whole tile, padding included) and has
// thread 0 push it to `dst` with one bulk store; the store runs on while we compute on.
__device__ void push_tile(bf16* dst, bf16* stage, const float* cs) {
  constexpr int kChunks = config::kBN / 8;
  if (threadIdx.x == 0) kf::tma_wait_read<0>();  // the last push has read `stage`
  __syncthreads();
  for (int q = threadIdx.x; q < config::kBM * kChunks; q += blockDim.x) {
    const int r = q / kChunks, cc = q % kChunks * 8;
    *reinterpret_cast<uint4*>(stage + r * config::kBN + cc) =
        kf::pack_bf16x8(cs + r * config::Tile::kLdC + cc);
  }
  kf::fence_proxy_async_smem();  // our generic stores, before the async proxy reads them
  __syncthreads();
  if (threadIdx.x == 0) {
    kf::tma_store(dst, stage, config::kTileBytes);
    kf::tma_commit();
  }
}

// c[tile t] = sum over s of slot s of tile t in our workspace, in rank order, in fp32.
__device__ void reduce_tile(const globals& g, int64_t t, int tiles) {
  constexpr int kChunks = config::kBN / 8;
  const TilePos p = tile_pos(g, t);
  const bf16* mine = g.ws[g.sig.rank];
  for (int q = threadIdx.x; q < p.rows * kChunks; q += blockDim.x) {
    const int r = q / kChunks, cc = q % kChunks * 8;
    if (cc >= p.cols) continue;
    kf::Acc<bf16> acc;
    acc.zero();
    const int64_t off = t * config::kTileElems + r * config::kBN + cc;
    for (int s = 0; s < g.sig.world; ++s)
      acc.add(kf::ld16_stream(mine + s * static_cast<int64_t>(tiles) * config::kTileElems + off));
    kf::st16(g.c + (p.row0 + r) * g.n + p.col0 + cc, acc.pack());
  }
}

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  extern __shared__ __align__(128) char smem[];
  bf16* stage = reinterpret_cast<bf16*>(smem + config::Tile::kSmemBytes);
  const int w = g.sig.world, me = g.sig.rank;
  const int tiles = g.tiles_m * g.tiles_n;  // per owner
  config::Tile tile;
  for (int k = 1; k <= w; ++k) {
    const int o = (me + k) % w;  // peers first, from the next rank on; ourselves last
    const int64_t base = static_cast<int64_t>(o) * tiles;
    for (int64_t gi = first_of(base, blockIdx.x, gridDim.x); gi < base + tiles; gi += gridDim.x) {
      const int64_t t = gi - base;
      const TilePos p = tile_pos(g, t);
      const int64_t row = o * g.rows + p.row0;  // in a
      tile.zero();
      tile.mma(smem, g.a + row * g.kl, g.kl, g.b + p.col0, g.n, p.rows, p.cols, g.kl);
      const float* cs = tile.stage_f32(smem);
      if (w == 1)
        kf::store_tile_bf16(g.c + p.row0 * g.n + p.col0, g.n, cs, config::Tile::kLdC, p.rows,
                            p.cols);
      else
        push_tile(g.ws[o] + (static_cast<int64_t>(me) * tiles + t) * config::kTileElems, stage, cs);
    }
  }
  if (w == 1) return;
  if (threadIdx.x == 0) kf::tma_flush_for_peers();  // every push landed, then the signal
  kf::barrier(g.sig, config::kMid + blockIdx.x, g.epoch);
  const int64_t base = static_cast<int64_t>(me) * tiles;
  for (int64_t gi = first_of(base, blockIdx.x, gridDim.x); gi < base + tiles; gi += gridDim.x)
    reduce_tile(g, gi - base, tiles);
}

// Set in kf_setup for the shapes it was given.
static kf::SignalSet g_sig;
static bf16* g_ws = nullptr;  // [2 halves][world][tiles][tile]
static int64_t g_half = 0;    // elements per half
static int g_max_blocks = 0;
static int64_t g_m = 0, g_n = 0, g_kl = 0;

int setup(kf::Comm& comm, const kf::Tensor& A, const kf::Tensor& B) {
  g_m = A.shape[0], g_kl = A.shape[1], g_n = B.shape[1];
  const int64_t tiles =
      kf::ceil_div(g_m / comm.world, config::kBM) * kf::ceil_div(g_n, config::kBN);
  g_sig = kf::make_signals(comm, config::kSlots);
  if (!g_sig.local) return 1;
  if (comm.world > 1) {
    g_half = comm.world * tiles * config::kTileElems;
    g_ws = static_cast<bf16*>(comm.alloc(2 * g_half * sizeof(bf16)));
    if (!g_ws) return 1;
  }
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(config::kSmem)) != cudaSuccess)
    return 1;
  // The barrier pairs block b of every rank: the grid must run at once (and be the same
  // on every rank, which the shared device type and shapes make it).
  g_max_blocks = static_cast<int>(kf::min64(
      config::kMaxBlocks, kf::max_coresident_blocks(kernel, config::kThreads, config::kSmem)));
  return g_max_blocks > 0 ? 0 : 1;
}

int run(kf::Comm& comm, const kf::Tensor& A, const kf::Tensor& B, kf::Tensor& C) {
  if (A.shape[0] != g_m || A.shape[1] != g_kl || B.shape[1] != g_n) return 1;  // not setup's shapes
  globals g{};
  g.sig = g_sig;
  g.a = A.ptr<const bf16>();
  g.b = B.ptr<const bf16>();
  g.c = C.ptr<bf16>();
  g.rows = g_m / comm.world;
  g.n = g_n;
  g.kl = g_kl;
  g.tiles_m = static_cast<int>(kf::ceil_div(g.rows, config::kBM));
  g.tiles_n = static_cast<int>(kf::ceil_div(g_n, config::kBN));
  g.epoch = kf::next_epoch();
  if (comm.world > 1) g.ws = kf::peers(comm, g_ws + (g.epoch & 1u) * g_half);
  const int64_t total = static_cast<int64_t>(comm.world) * g.tiles_m * g.tiles_n;
  const int blocks = static_cast<int>(kf::min64(total, g_max_blocks));
  kernel<<<blocks, config::kThreads, config::kSmem, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace gemm_rs

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  return gemm_rs::setup(comm, t["a"], t["b"]);
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return gemm_rs::run(comm, t["a"], t["b"], t["c"]);
}
