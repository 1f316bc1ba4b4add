// gemm_all_gather, expert kernel on kf/: c(every rank) = [a(0) @ b(0) | ... | a(w-1) @ b(w-1)],
// in one kernel whose matrix product overlaps the gathering of the pieces.
//
// Intra-SM (a tile's producer is its only sender, as gemm_reduce_scatter): each block
// computes BM x BN tiles of our piece P = a @ b (kf::TileGemm, bf16 tensor cores, fp32
// accumulators, rounded once to bf16), writes each finished tile into our columns
// rank*N/w + ... of our c and sends it to every peer while it computes its next tile, so
// there is no separate gather launch and no torch.cat copy. Tile t is block t % grid's
// on every rank, so block b's barrier slots pair the same blocks everywhere.
//
// staged (default): one TMA bulk store per tile and peer into slot `rank` of the peer's
// workspace (tiles packed, rows x cols contiguous), one barrier, then each block copies its
// tiles of the peers' slots into c. The workspace has two halves used by alternate calls
// (the epoch's parity): we write half e%2 of a peer in call e only after our call e-1
// barrier saw that peer's call e-1 signal, so the peer's call e-2 kernel, the last reader
// of that half, has finished. Peers never touch our c: one barrier, no entry or exit
// barrier, and one thread per block moves the bytes (TMA fills NVLink from ~15 SMs, where
// register stores need ~76 [PK]), for one more local pass over the peers' pieces.
// push: register stores of the tile straight into every peer's c. A peer's c
// is poisoned between calls, so we may write it only once the peer entered this call:
// every block signals its entry slot when it starts and waits for the peers' entry
// signals only before its first peer store, after its first tile's math (a split entry
// barrier, its latency hidden behind that tile). An exit barrier keeps every rank in the
// call until every peer's stores into its c have landed. No extra pass, but two barriers
// and register stores from the compute warps.
// World 1: the tile goes into c; no barrier.
#include <kf/gemm.cuh>
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped). 64 x 128 tiles make 128 tiles of PKB's 1024 x 1024 piece
// at world 1: one wave on the 132 SMs of an H100.
#ifndef KF_ALGO
#define KF_ALGO staged  // staged | push
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

namespace gemm_ag {

using bf16 = __nv_bfloat16;

enum class algo { staged, push };

struct config {
  using Tile = kf::TileGemm<KF_BM, KF_BN, KF_BK, 2, 2, KF_STAGES>;
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr bool kStaged = kAlgo == algo::staged;
  static constexpr int kBM = KF_BM, kBN = KF_BN;
  static constexpr int kThreads = Tile::kThreads;
  static constexpr int kTileBytes = kBM * kBN * 2;  // staged: one bf16 tile, one TMA store
  static constexpr size_t kSmem = Tile::kSmemBytes + (kStaged ? kTileBytes : 0);
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kStart = 0;         // push: entry; staged: every tile pushed
  static constexpr int kEnd = kMaxBlocks;  // push: exit
  static constexpr int kSlots = 2 * kMaxBlocks;
};

struct globals {
  kf::SignalSet sig;
  const bf16* a;       // [M, K]
  const bf16* b;       // [K, Nl]
  kf::Peers<bf16> c;   // c[r]: rank r's output [M, N]
  kf::Peers<bf16> ws;  // staged: ws[r] is this call's half of rank r's, [world][M * Nl]
  int64_t m, n, nl, k;
  int tiles_n, tiles;  // tiles of one piece
  uint32_t epoch;
};

struct TilePos {
  int64_t row0, col0, off;  // col0 within the piece; off: where the packed tile starts
  int rows, cols;
};
// Tile t of a piece. Packed, a piece's row band starts at row0 * Nl and holds its tiles
// (rows x cols each) one after another: every offset a multiple of 8 elements.
__device__ __forceinline__ TilePos tile_pos(const globals& g, int t) {
  TilePos p;
  p.row0 = static_cast<int64_t>(t / g.tiles_n) * config::kBM;
  p.col0 = static_cast<int64_t>(t % g.tiles_n) * config::kBN;
  p.rows = static_cast<int>(kf::min64(config::kBM, g.m - p.row0));
  p.cols = static_cast<int>(kf::min64(config::kBN, g.nl - p.col0));
  p.off = p.row0 * g.nl + p.rows * p.col0;
  return p;
}

// push: signal (threads r < world, one rank each) or wait for every rank's slot.
__device__ __forceinline__ void signal_slot(const globals& g, int slot) {
  for (int r = threadIdx.x; r < g.sig.world; r += blockDim.x) kf::signal(g.sig, r, slot, g.epoch);
}
__device__ __forceinline__ void wait_slot(const globals& g, int slot) {
  __syncthreads();
  for (int r = threadIdx.x; r < g.sig.world; r += blockDim.x) kf::wait(g.sig, r, slot, g.epoch);
  __syncthreads();
}

// staged: the tile rounded to bf16 into `stage`, packed, then one thread pushes it into
// slot `rank` of every peer's workspace (from the next rank on); the stores drain while
// the block computes on.
__device__ void push_tile(const globals& g, const TilePos& p, const float* cs, bf16* stage) {
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
    for (int k = 1; k < w; ++k)
      kf::tma_store(g.ws[(me + k) % w] + me * g.m * g.nl + p.off, stage, bytes);
    kf::tma_commit();
  }
}

// Every tile of our piece into our c and, by `config::kAlgo`, into every peer's c or
// workspace slot.
__device__ void compute_tiles(const globals& g, char* smem) {
  bf16* stage = reinterpret_cast<bf16*>(smem + config::Tile::kSmemBytes);
  const int w = g.sig.world, me = g.sig.rank;
  bool entered = w == 1 || config::kStaged;  // push: peers' entry signals seen
  config::Tile tile;
  for (int t = blockIdx.x; t < g.tiles; t += gridDim.x) {
    const TilePos p = tile_pos(g, t);
    tile.zero();
    tile.mma(smem, g.a + p.row0 * g.k, g.k, g.b + p.col0, g.nl, p.rows, p.cols, g.k);
    const float* cs = tile.stage_f32(smem);
    const int64_t at = p.row0 * g.n + me * g.nl + p.col0;  // in every c
    kf::store_tile_bf16(g.c[me] + at, g.n, cs, config::Tile::kLdC, p.rows, p.cols);
    if (w == 1) continue;
    if (config::kStaged) {
      push_tile(g, p, cs, stage);
      continue;
    }
    if (!entered) wait_slot(g, config::kStart + blockIdx.x);  // peers' c are this call's
    entered = true;
    for (int k = 1; k < w; ++k)
      kf::store_tile_bf16(g.c[(me + k) % w] + at, g.n, cs, config::Tile::kLdC, p.rows, p.cols);
  }
}

// staged, after the barrier: our tiles of every peer's piece, from our slots into c.
__device__ void copy_out(const globals& g) {
  const int w = g.sig.world, me = g.sig.rank;
  for (int t = blockIdx.x; t < g.tiles; t += gridDim.x) {
    const TilePos p = tile_pos(g, t);
    const int chunks = p.cols / 8;
    for (int k = 1; k < w; ++k) {
      const int s = (me + k) % w;
      const bf16* src = g.ws[me] + s * g.m * g.nl + p.off;
      bf16* dst = g.c[me] + p.row0 * g.n + s * g.nl + p.col0;
      for (int q = threadIdx.x; q < p.rows * chunks; q += blockDim.x)
        kf::st16(dst + q / chunks * g.n + q % chunks * 8, kf::ld16_stream(src + q * 8));
    }
  }
}

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  extern __shared__ __align__(128) char smem[];
  const int w = g.sig.world;
  if (w > 1 && !config::kStaged) signal_slot(g, config::kStart + blockIdx.x);  // we entered
  compute_tiles(g, smem);
  if (w == 1) return;
  if (!config::kStaged) {
    kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);  // every c is whole
    return;
  }
  if (threadIdx.x == 0) kf::tma_flush_for_peers();  // every push landed, then the signal
  kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);
  copy_out(g);
}

// Set in kf_setup for the shapes it was given.
static kf::SignalSet g_sig;
static bf16* g_ws = nullptr;  // staged: [2 halves][world][M * Nl]
static int g_max_blocks = 0;
static int64_t g_m = 0, g_nl = 0, g_k = 0;

int setup(kf::Comm& comm, const kf::Tensor& A, const kf::Tensor& B) {
  g_m = A.shape[0], g_k = A.shape[1], g_nl = B.shape[1];
  g_sig = kf::make_signals(comm, config::kSlots);
  if (!g_sig.local) return 1;
  if (config::kStaged && comm.world > 1) {
    g_ws = static_cast<bf16*>(comm.alloc(2 * comm.world * g_m * g_nl * sizeof(bf16)));
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
  if (A.shape[0] != g_m || A.shape[1] != g_k || B.shape[1] != g_nl) return 1;  // not setup's
  globals g{};
  g.sig = g_sig;
  g.a = A.ptr<const bf16>();
  g.b = B.ptr<const bf16>();
  g.c = kf::peers(comm, C.ptr<bf16>());
  g.m = g_m;
  g.nl = g_nl;
  g.n = g_nl * comm.world;
  g.k = g_k;
  g.tiles_n = static_cast<int>(kf::ceil_div(g_nl, config::kBN));
  g.tiles = static_cast<int>(kf::ceil_div(g_m, config::kBM)) * g.tiles_n;
  g.epoch = kf::next_epoch();
  if (g_ws) g.ws = kf::peers(comm, g_ws + (g.epoch & 1u) * comm.world * g_m * g_nl);
  const int blocks = static_cast<int>(kf::min64(g.tiles, g_max_blocks));
  kernel<<<blocks, config::kThreads, config::kSmem, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace gemm_ag

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  return gemm_ag::setup(comm, t["a"], t["b"]);
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return gemm_ag::run(comm, t["a"], t["b"], t["c"]);
}
