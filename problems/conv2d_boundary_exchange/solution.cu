// conv2d_boundary_exchange, expert kernel on kf/: y = bias + conv3x3(X), X being our rows
// padded with the neighbours' boundary rows (kf/halo.cuh) and zeros.
//
// An implicit GEMM on bf16 tensor cores (wmma, fp32 accumulators): y[b][o][pixel] =
// sum over k = (tap, i) of Wr[o][k] * Xp[b][pixel + tap][i], with Xp a channels-last,
// zero-padded copy of the input ([B][H+2][W+2][Cp], Cp = C rounded up to the k step) and
// Wr the weight reordered to [C][9][Cp]. Channels-last puts the k of one tap contiguous
// for every pixel, so both operands stream into shared memory with 16-byte cp.async and
// the im2col matrix the baseline writes and reads (9x the input) never exists; the
// padding makes every tap of every pixel an in-bounds read, so the loads need no masks.
// The bias is added in the fp32 epilogue, one rounding to bf16.
//
// Three kernels, in stream order. halo (world > 1 only, <= 32 blocks, the only one that
// waits): entry barrier (the neighbours entered this call: their x is this call's), pull
// the previous rank's last row and the next rank's first row of every plane straight
// into rows 0 and H+1 of Xp, exit barrier (no neighbour still reads our x when we
// return). pack (a wide grid, no flags): our own rows into Xp, zeros for the pad columns
// and for the rows beyond the image, the weight into Wr. conv: the GEMM, persistent
// tiles, out-channel tiles fastest so a pixel tile's inputs are reused from L2. Nothing
// after the halo kernel touches a peer, and Xp, Wr are ours alone, rewritten each call
// only after our previous call's kernels finished (one stream): no flag is ever reset,
// the epoch orders the barriers. At world 1 there is no halo kernel: two launches.
#include <kf/halo.cuh>
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped): the GEMM tile of 2 x 4 warps.
#ifndef KF_BM
#define KF_BM 128  // out channels per tile: 64 or 128
#endif
#ifndef KF_BN
#define KF_BN 128  // pixels per tile: 64 or 128
#endif
#ifndef KF_BK
#define KF_BK 32  // k per pipeline stage: 32 or 64 (input channels of one tap)
#endif
#ifndef KF_STAGES
#define KF_STAGES 3  // cp.async pipeline depth
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 264  // GEMM grid maximum (also capped by what fits on the GPU at once)
#endif

namespace conv_halo {

using bf16 = __nv_bfloat16;

struct config {
  static constexpr int kBM = KF_BM, kBN = KF_BN, kBK = KF_BK, kStages = KF_STAGES;
  static constexpr int kWM = 2, kWN = 4;  // warps along out channels and pixels
  static constexpr int kThreads = kWM * kWN * 32;
  static constexpr int kFragM = kBM / kWM / 16, kFragN = kBN / kWN / 16;
  static_assert(kBM % (16 * kWM) == 0 && kBN % (16 * kWN) == 0, "BM % 32, BN % 64");
  static_assert(kBK % 16 == 0 && kStages >= 2, "BK a multiple of 16, at least 2 stages");
  static constexpr int kLd = kBK + 8;  // shared rows of both operands: k-contiguous, +16 B
  static constexpr int kStageElems = (kBM + kBN) * kLd;
  static constexpr int kLdC = kBN + 4;  // fp32 epilogue tile
  static constexpr size_t kPipe = size_t(kStages) * kStageElems * 2,
                          kCBytes = size_t(kBM) * kLdC * 4;
  static constexpr size_t kSmem = ((kPipe > kCBytes ? kPipe : kCBytes) + 127) / 128 * 128;
  static constexpr int kAChunks = kBM * kBK / 8 / kThreads;  // 16-byte copies per thread
  static constexpr int kBChunks = kBN * kBK / 8 / kThreads;
  static_assert(kAChunks >= 1 && kBChunks >= 1, "every thread copies at least one chunk");
  static constexpr int kMaxBlocks = KF_BLOCKS;
  // pack and halo kernels
  static constexpr int kPackThreads = 256;
  static constexpr int kTile = 64;        // pack: 64 pixels x 64 channels through shared memory
  static constexpr int kWChunk = 128;     // pack: input channels of one weight row per block
  static constexpr int kHaloBlocks = 32;  // the halo kernel waits on peers: few blocks
  static constexpr int kStart = 0, kEnd = kHaloBlocks, kSlots = 2 * kHaloBlocks;
};

struct Shape {
  int64_t b, c, h, w, cp;  // cp: channels padded to a multiple of kBK
  __host__ __device__ int64_t pixels() const { return b * h * w; }
  __host__ __device__ int64_t xp_off(int64_t bi, int64_t g, int64_t col) const {  // padded g, col
    return ((bi * (h + 2) + g) * (w + 2) + col) * cp;
  }
};

// ---- halo: the neighbours' boundary rows into rows 0 and H+1 of Xp -------------------
__global__ void __launch_bounds__(config::kPackThreads)
    halo_kernel(kf::SignalSet sig, kf::Peers<const bf16> x, bf16* xp, Shape s, uint32_t epoch) {
  kf::barrier(sig, config::kStart + blockIdx.x, epoch);  // the neighbours' x are this call's
  auto store = [&](int64_t g, int64_t plane, int64_t col, bf16 v) {
    xp[s.xp_off(plane / s.c, g + 1, col + 1) + plane % s.c] = v;
  };
  kf::halo_pull(x, sig.rank, sig.world, s.b * s.c, s.h, s.w, 1, store, kf::grid_tid(),
                kf::grid_threads());
  kf::barrier(sig, config::kEnd + blockIdx.x, epoch);  // nobody still reads our x
}

// ---- pack: our rows into Xp (transposed through shared memory), the weight into Wr ----
// One 64-pixel x 64-channel tile of padded row g of image bi: rows from our own x, zeros
// for a row beyond the image; rows a neighbour holds are the halo kernel's.
__device__ void pack_x_tile(const bf16* x, bf16* xp, const Shape& s, int rank, int world,
                            int64_t t) {
  constexpr int T = config::kTile;
  __shared__ uint16_t tile[T][T + 1];  // odd pitch: the column reads hit distinct banks
  const int64_t tw = kf::ceil_div(s.w, T), tc = kf::ceil_div(s.cp, T);
  const int64_t c0 = t % tc * T, w0 = t / tc % tw * T, g = t / (tc * tw) % (s.h + 2);
  const int64_t bi = t / (tc * tw * (s.h + 2));
  if (w0 == 0)  // the zero columns left of column 0 and right of column W - 1
    for (int e = threadIdx.x; e < 2 * T; e += blockDim.x) {
      const int64_t c = c0 + e % T;
      if (c < s.cp) xp[s.xp_off(bi, g, e < T ? 0 : s.w + 1) + c] = __ushort_as_bfloat16(0);
    }
  const kf::HaloSource src = kf::halo_source(rank, world, s.h, g - 1);
  // A neighbour's row is the halo kernel's (its channel padding, c >= C, is never
  // written: still the zeros of kf_setup's allocation, as the weight's padding is zero).
  if (src.rank >= 0 && src.rank != rank) return;
  const uint16_t* xs = reinterpret_cast<const uint16_t*>(x);
  for (int e = threadIdx.x; e < T * T; e += blockDim.x) {
    const int cc = e / T, ww = e % T;  // consecutive threads: consecutive columns
    const int64_t c = c0 + cc, col = w0 + ww;
    uint16_t v = 0;
    if (src.rank >= 0 && c < s.c && col < s.w) v = xs[((bi * s.c + c) * s.h + src.row) * s.w + col];
    tile[cc][ww] = v;
  }
  __syncthreads();
  for (int e = threadIdx.x; e < T * T / 2; e += blockDim.x) {
    const int ww = e / (T / 2), cc = e % (T / 2) * 2;  // consecutive threads: channel pairs
    const int64_t col = w0 + ww, c = c0 + cc;
    if (col >= s.w || c >= s.cp) continue;  // cp is even: a pair is in or out whole
    const uint32_t v = tile[cc][ww] | static_cast<uint32_t>(tile[cc + 1][ww]) << 16;
    *reinterpret_cast<uint32_t*>(xp + s.xp_off(bi, g, col + 1) + c) = v;
  }
}

// Wr[o][tap][i] = weight[o][i][tap] (zero for i >= C) for kWChunk channels of row o.
__device__ void pack_w_chunk(const bf16* weight, bf16* wr, const Shape& s, int64_t t) {
  constexpr int K = config::kWChunk;
  __shared__ uint16_t wt[9 * K];
  const int64_t per_row = kf::ceil_div(s.cp, K), o = t / per_row, i0 = t % per_row * K;
  const uint16_t* ws = reinterpret_cast<const uint16_t*>(weight) + (o * s.c + i0) * 9;
  const int64_t valid = kf::min64(K, s.c - i0) * 9;  // may be <= 0 in the channel padding
  for (int e = threadIdx.x; e < 9 * K; e += blockDim.x) wt[e] = e < valid ? ws[e] : 0;
  __syncthreads();
  uint16_t* dst = reinterpret_cast<uint16_t*>(wr) + o * 9 * s.cp + i0;
  for (int e = threadIdx.x; e < 9 * K; e += blockDim.x) {
    const int tap = e / K, j = e % K;
    if (i0 + j < s.cp) dst[tap * s.cp + j] = wt[j * 9 + tap];
  }
}

__global__ void __launch_bounds__(config::kPackThreads)
    pack_kernel(const bf16* x, const bf16* weight, bf16* xp, bf16* wr, Shape s, int rank, int world,
                int64_t x_tiles) {
  if (blockIdx.x < x_tiles)
    pack_x_tile(x, xp, s, rank, world, blockIdx.x);
  else
    pack_w_chunk(weight, wr, s, blockIdx.x - x_tiles);
}

// ---- conv: the implicit GEMM over Xp and Wr -------------------------------------------
struct ConvArgs {
  const bf16* xp;    // [B][H+2][W+2][Cp]
  const bf16* wr;    // [C][9][Cp]
  const bf16* bias;  // [C]
  bf16* y;           // [B][C][H][W]
  Shape s;
  int64_t tiles_m, tiles;  // out-channel tiles; all tiles
};

namespace wmma = nvcuda::wmma;
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>;
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

// One BM x BN output tile: where this thread's 16-byte copies come from (fixed for the
// tile; a k step only adds its tap's offset), and the accumulators.
struct ConvTile {
  static constexpr int kRowsPerPass = config::kThreads / (config::kBK / 8);
  const bf16* a[config::kAChunks];  // Wr rows (nullptr: beyond C, zero-filled)
  int64_t b[config::kBChunks];      // Xp offset of each pixel's tap-0 row (-1: beyond)
  int kc;                           // this thread's k offset inside a step
  FragC acc[config::kFragM][config::kFragN];

  __device__ void start(const ConvArgs& g, int64_t o0, int64_t p0) {
    kc = threadIdx.x % (config::kBK / 8) * 8;
    const int row = threadIdx.x / (config::kBK / 8);
#pragma unroll
    for (int j = 0; j < config::kAChunks; ++j) {
      const int64_t o = o0 + row + j * kRowsPerPass;
      a[j] = o < g.s.c ? g.wr + o * 9 * g.s.cp : nullptr;
    }
    const int64_t hw = g.s.h * g.s.w;
#pragma unroll
    for (int j = 0; j < config::kBChunks; ++j) {
      const int64_t p = p0 + row + j * kRowsPerPass;
      const int64_t bi = p / hw, hh = p % hw / g.s.w, ww = p % g.s.w;
      b[j] = p < g.s.pixels() ? g.s.xp_off(bi, hh, ww) : -1;  // tap (0, 0): row hh - 1 + 1
    }
#pragma unroll
    for (int i = 0; i < config::kFragM; ++i)
#pragma unroll
      for (int j = 0; j < config::kFragN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  }

  // Step kt (k0 = kt * BK, inside one tap since Cp % BK == 0) into stage `st`.
  __device__ void load(const ConvArgs& g, bf16* st, int kt) const {
    const int cp = static_cast<int>(g.s.cp), k0 = kt * config::kBK, tap = k0 / cp;
    const int64_t shift = (tap / 3 * (g.s.w + 2) + tap % 3) * g.s.cp + (k0 - tap * cp) + kc;
    const int row = threadIdx.x / (config::kBK / 8);
    bf16* sa = st;
    bf16* sb = st + config::kBM * config::kLd;
#pragma unroll
    for (int j = 0; j < config::kAChunks; ++j)
      kf::cp_async16(sa + (row + j * kRowsPerPass) * config::kLd + kc, a[j] ? a[j] + k0 + kc : g.wr,
                     a[j] != nullptr);
#pragma unroll
    for (int j = 0; j < config::kBChunks; ++j)
      kf::cp_async16(sb + (row + j * kRowsPerPass) * config::kLd + kc,
                     b[j] >= 0 ? g.xp + b[j] + shift : g.xp, b[j] >= 0);
  }

  __device__ void compute(const bf16* st) {
    const bf16* sa = st;
    const bf16* sb = st + config::kBM * config::kLd;
    const int warp = threadIdx.x / 32, wm = warp / config::kWN, wn = warp % config::kWN;
#pragma unroll
    for (int kk = 0; kk < config::kBK; kk += 16) {
      FragA fa[config::kFragM];
      FragB fb[config::kFragN];
#pragma unroll
      for (int i = 0; i < config::kFragM; ++i)
        wmma::load_matrix_sync(fa[i], sa + ((wm * config::kFragM + i) * 16) * config::kLd + kk,
                               config::kLd);
#pragma unroll
      for (int j = 0; j < config::kFragN; ++j)  // pixel rows of sb are B's columns
        wmma::load_matrix_sync(fb[j], sb + ((wn * config::kFragN + j) * 16) * config::kLd + kk,
                               config::kLd);
#pragma unroll
      for (int i = 0; i < config::kFragM; ++i)
#pragma unroll
        for (int j = 0; j < config::kFragN; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
  }

  // The whole k range through a kStages-deep cp.async pipeline (as kf::TileGemm::mma).
  __device__ void mainloop(const ConvArgs& g, bf16* smem) {
    const int nk = static_cast<int>(9 * g.s.cp / config::kBK);
    __syncthreads();  // the last tile's epilogue is done with smem
#pragma unroll
    for (int st = 0; st < config::kStages - 1; ++st) {
      if (st < nk) load(g, smem + st * config::kStageElems, st);
      kf::cp_async_commit();  // empty groups keep the count per stage fixed
    }
    for (int kt = 0; kt < nk; ++kt) {
      kf::cp_async_wait<config::kStages - 2>();  // step kt landed (this thread's copies) ...
      __syncthreads();  // ... and everyone's; step kt - 1's stage is free again
      const int next = kt + config::kStages - 1;
      if (next < nk) load(g, smem + next % config::kStages * config::kStageElems, next);
      kf::cp_async_commit();
      compute(smem + kt % config::kStages * config::kStageElems);
    }
    kf::cp_async_wait<0>();
  }
};

// The tile (fp32 in smem, out channels x pixels) plus the bias, rounded once, into y:
// 8 pixels per 16-byte store when every image's H*W is a multiple of 8 (then 8 pixels
// never straddle two images and every store is aligned), else one at a time.
__device__ void store_tile(const ConvArgs& g, const float* cs, int64_t o0, int64_t p0) {
  const int64_t hw = g.s.h * g.s.w;
  if (hw % 8 == 0) {
    constexpr int kChunks = config::kBN / 8;
    for (int q = threadIdx.x; q < config::kBM * kChunks; q += blockDim.x) {
      const int r = q / kChunks, cc = q % kChunks * 8;
      const int64_t o = o0 + r, p = p0 + cc;
      if (o >= g.s.c || p >= g.s.pixels()) continue;
      const float bias = __bfloat162float(g.bias[o]);
      float v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) v[e] = cs[r * config::kLdC + cc + e] + bias;
      kf::st16(g.y + (p / hw * g.s.c + o) * hw + p % hw, kf::pack_bf16x8(v));
    }
    return;
  }
  for (int q = threadIdx.x; q < config::kBM * config::kBN; q += blockDim.x) {
    const int r = q / config::kBN, cc = q % config::kBN;
    const int64_t o = o0 + r, p = p0 + cc;
    if (o >= g.s.c || p >= g.s.pixels()) continue;
    const float v = cs[r * config::kLdC + cc] + __bfloat162float(g.bias[o]);
    g.y[(p / hw * g.s.c + o) * hw + p % hw] = __float2bfloat16_rn(v);
  }
}

__global__ void __launch_bounds__(config::kThreads)
    conv_kernel(const __grid_constant__ ConvArgs g) {
  extern __shared__ __align__(128) char smem[];
  bf16* pipe = reinterpret_cast<bf16*>(smem);
  float* cs = reinterpret_cast<float*>(smem);
  const int warp = threadIdx.x / 32, wm = warp / config::kWN, wn = warp % config::kWN;
  ConvTile tile;
  for (int64_t t = blockIdx.x; t < g.tiles; t += gridDim.x) {
    const int64_t o0 = t % g.tiles_m * config::kBM, p0 = t / g.tiles_m * config::kBN;
    tile.start(g, o0, p0);
    tile.mainloop(g, pipe);
    __syncthreads();  // every warp is done reading the pipeline's last stage
#pragma unroll
    for (int i = 0; i < config::kFragM; ++i)
#pragma unroll
      for (int j = 0; j < config::kFragN; ++j)
        wmma::store_matrix_sync(
            cs + (wm * config::kFragM + i) * 16 * config::kLdC + (wn * config::kFragN + j) * 16,
            tile.acc[i][j], config::kLdC, wmma::mem_row_major);
    __syncthreads();
    store_tile(g, cs, o0, p0);
  }
}

// ---- host -------------------------------------------------------------------------------
// Set in kf_setup for the shapes it was given.
static kf::SignalSet g_sig;
static bf16* g_xp = nullptr;  // [B][H+2][W+2][Cp], ours alone
static bf16* g_wr = nullptr;  // [C][9][Cp], ours alone
static Shape g_shape{};
static int g_max_blocks = 0;

int setup(kf::Comm& comm, const kf::Tensor& X) {
  Shape& s = g_shape;
  s = Shape{X.shape[0], X.shape[1], X.shape[2], X.shape[3], kf::round_up(X.shape[1], config::kBK)};
  g_sig = kf::make_signals(comm, config::kSlots);
  g_xp = comm.alloc_array<bf16>(static_cast<size_t>(s.b * (s.h + 2) * (s.w + 2) * s.cp));
  g_wr = comm.alloc_array<bf16>(static_cast<size_t>(s.c * 9 * s.cp));
  if (!g_sig.local || !g_xp || !g_wr) return 1;
  if (cudaFuncSetAttribute(conv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(config::kSmem)) != cudaSuccess)
    return 1;
  g_max_blocks = static_cast<int>(kf::min64(
      config::kMaxBlocks, kf::max_coresident_blocks(conv_kernel, config::kThreads, config::kSmem)));
  return g_max_blocks > 0 ? 0 : 1;
}

int run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& X = t["x"];
  const Shape& s = g_shape;
  if (X.shape[0] != s.b || X.shape[1] != s.c || X.shape[2] != s.h || X.shape[3] != s.w) return 1;
  const bf16* x = X.ptr<const bf16>();
  const uint32_t epoch = kf::next_epoch();
  cudaStream_t st = comm.stream();
  if (comm.world > 1) {  // the same grid on every rank: block b meets block b of each peer
    const int blocks = kf::grid_for(2 * s.b * s.c * s.w, config::kPackThreads, config::kHaloBlocks);
    halo_kernel<<<blocks, config::kPackThreads, 0, st>>>(g_sig, kf::peers(comm, x), g_xp, s, epoch);
  }
  const int64_t x_tiles =
      s.b * (s.h + 2) * kf::ceil_div(s.w, config::kTile) * kf::ceil_div(s.cp, config::kTile);
  const int64_t w_chunks = s.c * kf::ceil_div(s.cp, config::kWChunk);
  pack_kernel<<<static_cast<unsigned>(x_tiles + w_chunks), config::kPackThreads, 0, st>>>(
      x, t["weight"].ptr<const bf16>(), g_xp, g_wr, s, comm.rank, comm.world, x_tiles);
  ConvArgs g{g_xp, g_wr, t["bias"].ptr<const bf16>(), t["y"].ptr<bf16>(), s, 0, 0};
  g.tiles_m = kf::ceil_div(s.c, config::kBM);
  g.tiles = g.tiles_m * kf::ceil_div(s.pixels(), config::kBN);
  const int blocks = static_cast<int>(kf::min64(g.tiles, g_max_blocks));
  conv_kernel<<<blocks, config::kThreads, config::kSmem, st>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace conv_halo

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  return conv_halo::setup(comm, t["x"]);
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return conv_halo::run(comm, t);
}
