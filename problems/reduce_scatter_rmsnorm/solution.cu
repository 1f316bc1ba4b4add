// reduce_scatter_rmsnorm, expert kernel on kf/: rank r's y = RMSNorm(m) * gamma(rank 0),
// m = the mean over ranks s of chunk r of x(s), viewed as [rows, hidden].
//
// One kernel, a warp per row of our share (hidden <= 128 here, so a row is one 16-byte
// vector per lane, or a few scalars per lane where hidden % 8 != 0). The warp sums row i
// over the ranks in rank order in fp32, divides by world, reduces the squares across
// the warp and writes y = m * rsqrt(mean square + eps) * gamma, rounded to bf16 once:
// the mean never goes through memory (the baseline writes the sum, rounds the mean,
// and reads it back in a second kernel), and there is one launch instead of NCCL's
// group and a norm kernel. At world 1 nothing crosses and there is no barrier at all.
//
// push (default): before any wait, every warp stores row i of chunk c of our x into
// slot `rank` of rank c's staging buffer, and rank 0's block b stores gamma into gamma
// slot b of every rank's staging; one barrier (block b pairs with block b of every
// peer: the same rows, and rank 0's block b wrote our block b's gamma); then the warp
// sums its row from our own staging (our own chunk straight from our x). The staging
// alternates between two buffers by the epoch's parity: a rank writes buffer p in call
// k + 2 only after its call k + 1 kernel passed a barrier that every peer's call k + 1
// kernel signalled, after its call k kernel (the last reader of buffer p) finished.
// Peers never read our x or gamma, so no entry or exit barrier: one per call.
// pull: an entry barrier (every x and rank 0's gamma are this call's), then the warp
// loads row i of chunk `rank` straight from every peer's x and gamma from rank 0; an
// exit barrier keeps every input unchanged until every peer has read it.
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped). 32 blocks of 8 warps give PKB's 256 rows a row per warp.
#ifndef KF_ALGO
#define KF_ALGO push  // push (one barrier, staging) | pull (two barriers, peers' x)
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 256  // threads per block, a multiple of 32: a row per warp
#endif

namespace rs_rmsnorm {

using bf16 = __nv_bfloat16;

enum class algo { push, pull };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kMaxBlocks = KF_BLOCKS;  // also the gamma slots of a staging buffer
  static constexpr int kStart = 0;              // pull: entry; push: the chunks are in
  static constexpr int kEnd = kMaxBlocks;       // pull: exit
  static constexpr int kSlots = 2 * kMaxBlocks;
  static constexpr int kPer = 8;  // elements per lane: one vector, or 8 scalars
  static constexpr int64_t kMaxHidden = 32 * kPer;
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "KF_THREADS: a multiple of 32");
};

struct globals {
  kf::SignalSet sig;
  const bf16* x;  // ours: [world][rows * hidden]
  // src[s]: our share as rank s holds it (pull: chunk `rank` of rank s's x; push: slot
  // s of our staging, and our own x for s == rank).
  kf::Peers<const bf16> src;
  kf::Peers<bf16> stage;  // push: stage[c]: rank c's staging, this parity
  const bf16* gamma;      // rank 0's gamma, or (push, ranks > 0) our staging's gamma slots
  int64_t gamma_stride;   // block b reads gamma + b * gamma_stride (0 or hidden)
  bf16* y;                // [rows, hidden]
  int64_t rows, hidden;
  float eps;
  uint32_t epoch;
  bool vec;  // hidden % 8 == 0 and every base on 16 bytes: a row is hidden / 8 vectors
};

__device__ __forceinline__ void unpack8(uint4 v, float* f) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 t = __bfloat1622float2(h[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}

// push: row i of chunk c of our x into slot `rank` of rank c's staging, peers first from
// the next rank on (our own chunk stays in x); rank 0 also sends block b's gamma slot.
__device__ void push_rows(const globals& g, int64_t first, int64_t stride, int lane) {
  const int w = g.sig.world, me = g.sig.rank;
  const int64_t n = g.rows * g.hidden;
  for (int64_t i = first; i < g.rows; i += stride)
    for (int k = 1; k < w; ++k) {
      const int c = (me + k) % w;
      const bf16* from = g.x + c * n + i * g.hidden;
      bf16* to = g.stage[c] + me * n + i * g.hidden;
      if (g.vec) {
        if (lane < g.hidden / 8)
          kf::st16(to + lane * 8, __ldg(reinterpret_cast<const uint4*>(from) + lane));
      } else {
        for (int64_t j = lane; j < g.hidden; j += 32) to[j] = from[j];
      }
    }
  if (me != 0) return;
  for (int k = 1; k < w; ++k) {
    bf16* to = g.stage[k] + w * n + blockIdx.x * g.hidden;
    for (int64_t j = threadIdx.x; j < g.hidden; j += blockDim.x) to[j] = g.gamma[j];
  }
}

// This lane's elements of row i of the mean share m, summed over the ranks in rank
// order in fp32: vec, elements 8 lane + e (lanes < hidden / 8); scalar, lane + 32 e.
// Elements past the row stay 0, so they add nothing to the squares. Loads bypass L1
// (__ldcg): push's staging is written by peers during this kernel, and another block of
// this SM may have cached a line it shares with our row before they wrote it.
__device__ void mean_row(const globals& g, int64_t i, int lane, float* m) {
  const int w = g.sig.world;
  const int64_t at = i * g.hidden;
#pragma unroll
  for (int e = 0; e < config::kPer; ++e) m[e] = 0.f;
  if (g.vec) {
    if (lane >= g.hidden / 8) return;
    for (int s0 = 0; s0 < w; s0 += 8) {  // up to 8 loads in flight, then the adds in order
      uint4 v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u)
        if (s0 + u < w) v[u] = __ldcg(reinterpret_cast<const uint4*>(g.src[s0 + u] + at) + lane);
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        if (s0 + u >= w) continue;
        float f[8];
        unpack8(v[u], f);
#pragma unroll
        for (int e = 0; e < 8; ++e) m[e] += f[e];
      }
    }
  } else {
    for (int s = 0; s < w; ++s)
#pragma unroll
      for (int e = 0; e < config::kPer; ++e)
        if (lane + 32 * e < g.hidden)
          m[e] += __bfloat162float(__ldcg(g.src[s] + at + lane + 32 * e));
  }
#pragma unroll
  for (int e = 0; e < config::kPer; ++e) m[e] /= static_cast<float>(w);
}

// y[i] = m * rsqrt(mean(m^2) + eps) * gamma for the warp's row i.
__device__ void norm_row(const globals& g, int64_t i, int lane) {
  float m[config::kPer];
  mean_row(g, i, lane, m);
  float sq = 0.f;
#pragma unroll
  for (int e = 0; e < config::kPer; ++e) sq += m[e] * m[e];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) sq += __shfl_xor_sync(0xffffffffu, sq, o);
  const float scale = rsqrtf(sq / static_cast<float>(g.hidden) + g.eps);
  const bf16* gamma = g.gamma + blockIdx.x * g.gamma_stride;
  bf16* out = g.y + i * g.hidden;
  if (g.vec) {
    if (lane >= g.hidden / 8) return;
    float gf[8];
    unpack8(__ldcg(reinterpret_cast<const uint4*>(gamma) + lane), gf);  // push: peer-written
#pragma unroll
    for (int e = 0; e < 8; ++e) m[e] = m[e] * scale * gf[e];
    kf::st16(out + lane * 8, kf::pack_bf16x8(m));
  } else {
#pragma unroll
    for (int e = 0; e < config::kPer; ++e) {
      const int64_t j = lane + 32 * e;
      if (j < g.hidden)
        out[j] = __float2bfloat16_rn(m[e] * scale * __bfloat162float(__ldcg(gamma + j)));
    }
  }
}

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  const int lane = threadIdx.x % 32;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * config::kWarps + threadIdx.x / 32;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * config::kWarps;
  const bool multi = g.sig.world > 1;
  if (multi && config::kAlgo == algo::push) push_rows(g, first, stride, lane);
  // push: block b's rows of every peer's chunk and its gamma slot are in our staging;
  // pull: every peer entered, so its x and rank 0's gamma are this call's.
  if (multi) kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);
  for (int64_t i = first; i < g.rows; i += stride) norm_row(g, i, lane);
  // pull: no peer reads our x or gamma any more (push: peers never read them).
  if (multi && config::kAlgo == algo::pull) kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);
}

// Set in kf_setup for the shapes it was given.
static kf::SignalSet g_sig;
static bf16* g_stage = nullptr;  // push: [2 parities][world slots of rows * hidden | gammas]
static int64_t g_half = 0;       // elements per parity
static int64_t g_rows = 0, g_hidden = 0;

int setup(kf::Comm& comm, const kf::Tensor& Y) {
  g_rows = Y.shape[0];
  g_hidden = Y.shape[1];
  if (g_hidden > config::kMaxHidden) return 1;  // hidden <= 128 by problem.json
  g_sig = kf::make_signals(comm, config::kSlots);
  if (!g_sig.local) return 1;
  if (comm.world > 1 && config::kAlgo == algo::push) {
    g_half = comm.world * g_rows * g_hidden + config::kMaxBlocks * g_hidden;
    g_stage = comm.alloc_array<bf16>(static_cast<size_t>(2 * g_half));
    if (!g_stage) return 1;
  }
  return 0;
}

int run(kf::Comm& comm, kf::Tensors& t) {
  kf::Tensor& Y = t["y"];
  if (Y.shape[0] != g_rows || Y.shape[1] != g_hidden) return 1;  // not setup's shapes
  const int w = comm.world, me = comm.rank;
  const int64_t n = g_rows * g_hidden;
  globals g{};
  g.sig = g_sig;
  g.x = t["x"].ptr<const bf16>();
  g.y = Y.ptr<bf16>();
  g.rows = g_rows;
  g.hidden = g_hidden;
  g.eps = static_cast<float>(t.param("eps"));
  g.epoch = kf::next_epoch();
  g.gamma = comm.peer(t["gamma"].ptr<const bf16>(), 0);  // rank 0's (ours at rank 0)
  bool aligned = kf::aligned16(g.x) && kf::aligned16(g.y) && kf::aligned16(g.gamma);
  for (int s = 0; s < w; ++s) g.src.ptr[s] = comm.peer(g.x, s) + me * n;
  if (w > 1 && config::kAlgo == algo::push) {
    bf16* stage = g_stage + (g.epoch & 1u) * g_half;
    g.stage = kf::peers(comm, stage);
    for (int s = 0; s < w; ++s)
      if (s != me) g.src.ptr[s] = stage + s * n;
    g.src.ptr[me] = g.x + me * n;
    if (me != 0) {  // rank 0's block b sends us gamma slot b
      g.gamma = stage + w * n;
      g.gamma_stride = g_hidden;
    }
    for (int c = 0; c < w; ++c) aligned = aligned && kf::aligned16(g.stage[c]);
  }
  for (int s = 0; s < w; ++s) aligned = aligned && kf::aligned16(comm.peer(g.x, s));
  g.vec = g_hidden % 8 == 0 && aligned;
  // The same grid on every rank (rows is): block b pairs with block b.
  const int blocks = kf::grid_for(g_rows, config::kWarps, config::kMaxBlocks);
  kernel<<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace rs_rmsnorm

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  return rs_rmsnorm::setup(comm, t["y"]);
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return rs_rmsnorm::run(comm, t);
}
