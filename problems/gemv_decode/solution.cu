// gemv_decode, expert kernel on kf/: logits(every rank)[t][s*V + v] = x(s)[t] . w(s)[v] +
// bias(s)[v], the GEMV of our vocabulary shard and the all-gather of the pieces in one
// kernel (the baseline launches a GEMM, a bias add, an all-gather, world copies and a
// cat).
//
// The GEMV reads our w once and is bound by memory (and at decode sizes by latency), so
// every half-warp takes whole rows of w: its 16 lanes load 16-byte vectors of the row,
// up to 8 each in flight (a whole 2 KiB row of H = 1024 at once), dot them with every
// token's x (L1-resident) in fp32, and shuffles sum the lanes; the logit (plus bias) is
// rounded once to bf16 and stored into our own columns of our logits. Block b owns the
// same contiguous range of vocabulary rows on every rank, so its barrier slots pair
// exactly the blocks that write and read those columns.
//
// push (default): each block signals its entry slot when it starts, computes, and only
// then waits for the peers' entry signals (a peer's logits are poisoned between calls,
// so we may write them only once the peer entered this call; the GEMV hides the wait),
// copies its columns from our logits (just written, still in L2) into every peer's
// logits, and ends with an exit barrier: nobody returns before the peers' columns have
// landed in its logits.
// pull: compute, a barrier (the peers' columns are in their logits), copy the same rows
// of every peer's columns out of its logits, and an exit barrier (nobody returns, and has
// its logits poisoned, while a peer still reads them).
// World 1: the GEMV alone, no barrier.
#include <cuda_bf16.h>

#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped). 32 blocks of 16 warps: 1024 rows in flight at once,
// PKB's whole V = 1024 in one round, and few enough blocks that each may wait on a flag.
#ifndef KF_ALGO
#define KF_ALGO push  // push | pull
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 512  // threads per block, a multiple of 32
#endif

namespace gemv {

using bf16 = __nv_bfloat16;

enum class algo { push, pull };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static_assert(kThreads % 32 == 0, "KF_THREADS: whole warps");
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kLanes = 16;        // lanes per row: two rows per warp
  static constexpr int kUnroll = 8;        // 16-byte loads of a row in flight per lane
  static constexpr int kTok = 4;           // tokens per pass over a row
  static constexpr int kStart = 0;         // slots [0, kMaxBlocks): push's entry, pull's middle
  static constexpr int kEnd = kMaxBlocks;  // [kMaxBlocks, 2 kMaxBlocks): exit
  static constexpr int kSlots = 2 * kMaxBlocks;
};

struct globals {
  kf::SignalSet sig;
  const bf16* x;           // [T, H]
  const bf16* w;           // [V, H]
  const bf16* bias;        // [V]
  kf::Peers<bf16> logits;  // logits[r]: rank r's, [T, world * V]
  int64_t t, h, v;
  uint32_t epoch;
};

// Read-only loads the compiler may batch: w streams through once (no L1 allocation), x is
// read by every warp (cached).
__device__ __forceinline__ uint4 ld_stream(const void* p) {
  uint4 r;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
  return r;
}
__device__ __forceinline__ float dot8(uint4 a, uint4 b, float acc) {
  const __nv_bfloat162* x = reinterpret_cast<const __nv_bfloat162*>(&a);
  const __nv_bfloat162* y = reinterpret_cast<const __nv_bfloat162*>(&b);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 p = __bfloat1622float2(x[i]), q = __bfloat1622float2(y[i]);
    acc = fmaf(p.x, q.x, acc);
    acc = fmaf(p.y, q.y, acc);
  }
  return acc;
}

// Row v of our piece for tokens t0 .. t0 + kTok - 1 (those < T), by one half-warp, into
// our columns of our logits. A half-warp past the block's rows (!valid) loads nothing but
// still joins the shuffles, which take the whole warp.
__device__ void row_logits(const globals& g, int64_t v, bool valid, int64_t t0) {
  constexpr int kL = config::kLanes;
  const int sub = threadIdx.x % kL;
  const int64_t hv = valid ? g.h / 8 : 0;  // 16-byte vectors per row (H is a multiple of 8)
  const uint4* wr = reinterpret_cast<const uint4*>(g.w + v * g.h);
  const uint4* xr = reinterpret_cast<const uint4*>(g.x + t0 * g.h);
  float acc[config::kTok] = {};
  for (int64_t k0 = sub; k0 < hv; k0 += kL * config::kUnroll) {
    uint4 wv[config::kUnroll];
#pragma unroll
    for (int u = 0; u < config::kUnroll; ++u)  // every load first, then the math
      wv[u] = k0 + u * kL < hv ? ld_stream(wr + k0 + u * kL) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < config::kUnroll; ++u)
#pragma unroll
      for (int j = 0; j < config::kTok; ++j)
        if (k0 + u * kL < hv && t0 + j < g.t)
          acc[j] = dot8(wv[u], __ldg(xr + j * (g.h / 8) + k0 + u * kL), acc[j]);
  }
  const float b = valid ? __bfloat162float(g.bias[v]) : 0.f;
  const int64_t cols = g.sig.world * g.v;
#pragma unroll
  for (int j = 0; j < config::kTok; ++j) {
    if (t0 + j >= g.t) break;  // uniform in the warp
    float s = acc[j];
    for (int off = kL / 2; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (sub == 0 && valid)
      g.logits[g.sig.rank][(t0 + j) * cols + g.sig.rank * g.v + v] = __float2bfloat16_rn(s + b);
  }
}

// This block's rows of the piece of rank `s`, every token, from src's logits to dst's
// (the same place in both): 16-byte vectors where the rows allow, by the whole block.
__device__ void copy_rows(const globals& g, const kf::Range& rows, int s, const bf16* src,
                          bf16* dst) {
  const int64_t cols = g.sig.world * g.v;
  for (int64_t t = 0; t < g.t; ++t) {
    const int64_t at = t * cols + s * g.v + rows.begin;
    kf::copy(dst + at, src + at, rows.size(), threadIdx.x, blockDim.x);
  }
}

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  const int w = g.sig.world, me = g.sig.rank;
  const bool push = config::kAlgo == algo::push;
  if (w > 1 && push)  // we entered: peers may write our logits once we are here
    for (int r = threadIdx.x; r < w; r += blockDim.x)
      kf::signal(g.sig, r, config::kStart + blockIdx.x, g.epoch);
  // Block ranges start on multiples of 8 entries: 16-byte copies wherever V allows.
  const kf::Range rows = kf::split(g.v, gridDim.x, blockIdx.x, 8);
  // Warp i takes rows 2i and 2i + 1 of each pass (a test uniform in the warp), one per half.
  const int per_pass = blockDim.x / config::kLanes;
  for (int64_t v0 = rows.begin + threadIdx.x / 32 * 2; v0 < rows.end; v0 += per_pass) {
    const int64_t v = v0 + threadIdx.x % 32 / config::kLanes;
    for (int64_t t0 = 0; t0 < g.t; t0 += config::kTok) row_logits(g, v, v < rows.end, t0);
  }
  if (w == 1) return;
  if (push) {
    __syncthreads();  // our columns are written (and visible to the whole block)
    for (int r = threadIdx.x; r < w; r += blockDim.x)
      kf::wait(g.sig, r, config::kStart + blockIdx.x, g.epoch);  // peers' logits are this call's
    __syncthreads();
    for (int k = 1; k < w; ++k) copy_rows(g, rows, me, g.logits[me], g.logits[(me + k) % w]);
  } else {
    kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);  // peers' columns are written
    for (int k = 1; k < w; ++k) {
      const int s = (me + k) % w;
      copy_rows(g, rows, s, g.logits[s], g.logits[me]);
    }
  }
  kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);  // push: ours whole; pull: read
}

// Set in kf_setup.
static kf::SignalSet g_sig;
static int g_max_blocks = 0;

int setup(kf::Comm& comm) {
  g_sig = kf::make_signals(comm, config::kSlots);
  if (!g_sig.local) return 1;
  // The barriers pair block b of every rank: the grid must run at once.
  g_max_blocks = static_cast<int>(
      kf::min64(config::kMaxBlocks, kf::max_coresident_blocks(kernel, config::kThreads, 0)));
  return g_max_blocks > 0 ? 0 : 1;
}

int run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& w = t["w"];
  globals g{};
  g.sig = g_sig;
  g.x = x.ptr<const bf16>();
  g.w = w.ptr<const bf16>();
  g.bias = t["bias"].ptr<const bf16>();
  g.logits = kf::peers(comm, t["logits"].ptr<bf16>());
  g.t = x.shape[0];
  g.h = x.shape[1];
  g.v = w.shape[0];
  g.epoch = kf::next_epoch();
  // One half-warp per row at a time; the same grid on every rank (same shapes and device).
  const int blocks = kf::grid_for(g.v, config::kThreads / config::kLanes, g_max_blocks);
  kernel<<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace gemv

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& /*t*/) {
  return gemv::setup(comm);
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return gemv::run(comm, t);
}
