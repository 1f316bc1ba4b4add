// vocab_parallel_cross_entropy, expert kernel on kf/: loss[t] = log(sum over the V logits
// of token t of exp(z)) - z[label], with the V logits split over the ranks, the same bits
// on every rank, in one kernel per call.
//
// The reference's three all-reduces (row max, label logit, sum of exponentials) fold into
// one exchange of per-token statistics: each rank reduces its shard of a token, in one
// pass over the logits (online softmax, fp32, exp2 of log2e-scaled differences), to (m, s):
// its max and the sum of exp(z - m). Any rank combines the world pairs in rank order:
// M = max m, S = sum of s * exp(m - M), loss = log(S) + M - z[label], rounded to bf16 once.
// Each block owns a fixed range of tokens (the same on every rank), so block b's barrier
// slot covers exactly the writers and readers of what block b touches.
// push (default): (m, s) into our own staging slot before any wait (only we write or read
// it). Barrier 1: rank 0's target is this call's, and every peer has finished the last
// call, so it no longer reads its staging. Add the label's logit where we own it (0
// elsewhere) and store the triple into slot `rank` of every rank's staging. Barrier 2:
// every slot of our tokens is written and no target is read after it. Combine from our
// own heap: a peer rewrites our staging only after the next call's barrier 1, which waits
// for our next kernel. No load crosses NVLink except rank 0's labels.
// pull: (m, s) into our scratch before any wait (peers stopped reading it before the
// last call's barrier 2). Barrier 1: every pair, logits and rank 0's target are this
// call's. Combine from the peers' pairs, reading the label's logit from its owner's
// logits. Barrier 2: nobody rewrites its scratch or inputs while a peer still reads them.
// World 1 needs no exchange: one warp per token reads its row once and writes the loss,
// no barrier, and the grid covers every token (nothing waits, so any grid is safe).
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped).
#ifndef KF_ALGO
#define KF_ALGO push  // push | pull
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum where blocks wait on peers (world > 1)
#endif
#ifndef KF_THREADS
#define KF_THREADS 256  // threads per block: one warp per token in the statistics pass
#endif

namespace vp_ce {

using bf16 = __nv_bfloat16;

enum class algo { push, pull };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kMaxBlocks = KF_BLOCKS;  // one barrier slot per block and phase
  static constexpr int kSoloBlocks = 4096;      // world 1: no block waits
  static constexpr int kUnroll = 4;             // 16-byte loads in flight per lane
  static constexpr int kFirst = 0;              // slots [0, kMaxBlocks): barrier 1
  static constexpr int kSecond = kMaxBlocks;    // slots [kMaxBlocks, 2 kMaxBlocks): barrier 2
  static constexpr int kSlots = 2 * kMaxBlocks;
};
static_assert(config::kThreads % 32 == 0, "KF_THREADS must be a multiple of 32");
constexpr unsigned kFull = 0xffffffffu;
constexpr float kLog2e = 1.4426950408889634f;
constexpr uint32_t kNegInf2 = 0xff80ff80u;  // two bf16 -inf

struct globals {
  kf::SignalSet sig;
  kf::Peers<const bf16> x;  // x[r]: rank r's logits, [rows][vl]
  const int64_t* label;     // rank 0's target
  kf::Peers<float4> stage;  // push: every rank's staging [world][rows] of (m, s, z[c], 0)
  kf::Peers<float2> pairs;  // pull: every rank's (m, s), [rows]
  bf16* loss;
  int64_t rows, vl;
  uint32_t epoch;
};

__device__ __forceinline__ float ex2(float v) {  // 2^v; 2^-inf = 0
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFull, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}

// A lane's running (m, s) of the values it has seen: m their max, s the sum of exp(v - m).
struct Online {
  float m = -INFINITY, s = 0.0f;
  // Folds the first n values of v (the rest are -inf): one rescale, then one exp each.
  template <int N>
  __device__ __forceinline__ void fold(const float (&v)[N], int n) {
    float top = m;
#pragma unroll
    for (int j = 0; j < N; ++j) top = fmaxf(top, v[j]);
    if (top == -INFINITY) return;  // nothing seen yet: keep -inf - -inf out of the exps
    const float shift = top * kLog2e;
    s *= ex2(fmaf(m, kLog2e, -shift));  // 0 while m is -inf
#pragma unroll
    for (int j = 0; j < N; ++j)
      if (j < n) s += ex2(fmaf(v[j], kLog2e, -shift));
    m = top;
  }
};

// Element j of 8 bf16 packed in a 16-byte vector, as a float (exact: bf16 is fp32's top half).
__device__ __forceinline__ float bf16_at(const uint4& raw, int j) {
  const uint32_t w = j < 2 ? raw.x : j < 4 ? raw.y : j < 6 ? raw.z : raw.w;
  return __uint_as_float(j % 2 ? w & 0xffff0000u : w << 16);
}

struct Stats {
  float m, s, zc;  // the row's max, sum of exp(z - m), z[c] (0 when c is not in it)
};

// One warp, one row z[0, n) (any alignment): a scalar head up to the first 16-byte
// boundary and a scalar tail (under 8 each: one per lane), 16-byte vectors between.
__device__ Stats row_stats(const bf16* z, int64_t n, int64_t c) {
  const int lane = threadIdx.x % 32;
  const int64_t head = kf::head_elems(reinterpret_cast<uintptr_t>(z), sizeof(bf16), n);
  const int64_t nvec = (n - head) / 8, tail = head + nvec * 8;
  Online acc;
  float zc = 0.0f;
  {
    float v[2] = {-INFINITY, -INFINITY};
    if (lane < head) v[0] = __bfloat162float(z[lane]);
    if (tail + lane < n) v[1] = __bfloat162float(z[tail + lane]);
    if (lane == c && lane < head) zc = v[0];
    if (tail + lane == c) zc = v[1];
    acc.fold(v, 2);
  }
  const uint4* body = reinterpret_cast<const uint4*>(z + head);
  const int64_t cv = c >= head && c < tail ? (c - head) / 8 : -1;  // the label's vector
  const int at = static_cast<int>((c - head) & 7);
  for (int64_t base = lane; base < nvec; base += 32 * config::kUnroll) {
    uint4 raw[config::kUnroll];
#pragma unroll
    for (int u = 0; u < config::kUnroll; ++u) {  // every load issued before any is used
      const int64_t i = base + 32 * u;           // past the row: bf16 -inf, which adds 0
      raw[u] =
          i < nvec ? kf::ld16_stream(body + i) : make_uint4(kNegInf2, kNegInf2, kNegInf2, kNegInf2);
    }
    float v[8 * config::kUnroll];
#pragma unroll
    for (int u = 0; u < config::kUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < 8; ++j) v[8 * u + j] = bf16_at(raw[u], j);
      if (base + 32 * u == cv) {
#pragma unroll
        for (int j = 0; j < 8; ++j) zc = j == at ? v[8 * u + j] : zc;
      }
    }
    acc.fold(v, 8 * static_cast<int>(kf::min64(config::kUnroll, (nvec - base + 31) / 32)));
  }
  const float m = warp_max(acc.m);
  const float s = acc.m == -INFINITY ? 0.0f : acc.s * ex2((acc.m - m) * kLog2e);
  return Stats{m, warp_sum(s), warp_sum(zc)};  // zc: one lane's value plus zeros, exact
}

// loss = log(S) + M - zc from the world pairs that get(r) returns, in rank order.
template <class Get>
__device__ __forceinline__ bf16 combine(int world, Get get, float zc) {
  float top = -INFINITY;
  for (int r = 0; r < world; ++r) top = fmaxf(top, get(r).x);
  float sum = 0.0f;
  for (int r = 0; r < world; ++r) {
    const float2 p = get(r);
    sum += p.y * expf(p.x - top);
  }
  return __float2bfloat16_rn(logf(sum) + top - zc);
}

// Block b's tokens: a fixed contiguous range, the same on every rank.
__device__ __forceinline__ kf::Range my_rows(const globals& g) {
  return kf::split(g.rows, static_cast<int>(gridDim.x), static_cast<int>(blockIdx.x));
}

// World 1: one warp per token, the label's logit taken from the registers on the way.
__global__ void __launch_bounds__(config::kThreads) solo(const __grid_constant__ globals g) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * config::kWarps;
  for (int64_t row = blockIdx.x * config::kWarps + threadIdx.x / 32; row < g.rows; row += step) {
    const Stats st = row_stats(g.x[0] + row * g.vl, g.vl, g.label[row]);
    if (threadIdx.x % 32 == 0) g.loss[row] = __float2bfloat16_rn(logf(st.s) + st.m - st.zc);
  }
}

// Our (m, s) of block b's tokens into dst[row] (.x, .y), one warp per token.
template <class T>
__device__ __forceinline__ void shard_stats(const globals& g, kf::Range rows, T* dst) {
  for (int64_t row = rows.begin + threadIdx.x / 32; row < rows.end; row += config::kWarps) {
    const Stats st = row_stats(g.x[g.sig.rank] + row * g.vl, g.vl, -1);
    if (threadIdx.x % 32 == 0) {
      dst[row].x = st.m;
      dst[row].y = st.s;
    }
  }
}

__global__ void __launch_bounds__(config::kThreads) push(const __grid_constant__ globals g) {
  const int world = g.sig.world, rank = g.sig.rank;
  const kf::Range rows = my_rows(g);
  float4* mine = g.stage[rank] + rank * g.rows;  // our slot of our staging
  shard_stats(g, rows, mine);
  kf::barrier(g.sig, config::kFirst + blockIdx.x, g.epoch);  // labels ready, staging free
  const int64_t first = rank * g.vl;
  for (int64_t row = rows.begin + threadIdx.x; row < rows.end; row += config::kThreads) {
    const int64_t c = g.label[row] - first;
    float4 v = mine[row];
    v.z = c >= 0 && c < g.vl ? __bfloat162float(g.x[rank][row * g.vl + c]) : 0.0f;
    v.w = 0.0f;
    for (int k = 1; k <= world; ++k) g.stage[(rank + k) % world][rank * g.rows + row] = v;
  }
  kf::barrier(g.sig, config::kSecond + blockIdx.x, g.epoch);  // every slot of ours written
  const float4* all = g.stage[rank];
  for (int64_t row = rows.begin + threadIdx.x; row < rows.end; row += config::kThreads) {
    float zc = 0.0f;  // the owner's logit; every other slot holds 0, so the sum is exact
    for (int r = 0; r < world; ++r) zc += all[r * g.rows + row].z;
    g.loss[row] = combine(
        world,
        [&](int r) {
          const float4 v = all[r * g.rows + row];
          return make_float2(v.x, v.y);
        },
        zc);
  }
}

__global__ void __launch_bounds__(config::kThreads) pull(const __grid_constant__ globals g) {
  const int world = g.sig.world;
  const kf::Range rows = my_rows(g);
  shard_stats(g, rows, g.pairs[g.sig.rank]);
  kf::barrier(g.sig, config::kFirst + blockIdx.x, g.epoch);  // pairs, logits, labels ready
  for (int64_t row = rows.begin + threadIdx.x; row < rows.end; row += config::kThreads) {
    const int64_t c = g.label[row];
    const float zc = __bfloat162float(g.x[static_cast<int>(c / g.vl)][row * g.vl + c % g.vl]);
    g.loss[row] = combine(
        world, [&](int r) { return g.pairs[r][row]; }, zc);
  }
  kf::barrier(g.sig, config::kSecond + blockIdx.x, g.epoch);  // peers done reading ours
}

static kf::SignalSet g_sig;
static void* g_scratch = nullptr;  // push: [world][rows] float4; pull: [rows] float2

}  // namespace vp_ce

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  using namespace vp_ce;
  const size_t rows = static_cast<size_t>(t["logits"].shape[0] * t["logits"].shape[1]);
  g_sig = kf::make_signals(comm, config::kSlots);
  g_scratch = config::kAlgo == algo::push ? comm.alloc(comm.world * rows * sizeof(float4))
                                          : comm.alloc(rows * sizeof(float2));
  return g_sig.local && g_scratch ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  using namespace vp_ce;
  const kf::Tensor& logits = t["logits"];
  globals g{};
  g.sig = g_sig;
  g.x = kf::peers(comm, logits.ptr<const bf16>());
  g.label = comm.peer(t["target"].ptr<const int64_t>(), 0);  // rank 0's labels count
  g.stage = kf::peers(comm, static_cast<float4*>(g_scratch));
  g.pairs = kf::peers(comm, static_cast<float2*>(g_scratch));
  g.loss = t["loss"].ptr<bf16>();
  g.rows = logits.shape[0] * logits.shape[1];
  g.vl = logits.shape[2];
  g.epoch = kf::next_epoch();
  cudaStream_t st = comm.stream();
  if (comm.world == 1) {
    solo<<<kf::grid_for(g.rows, config::kWarps, config::kSoloBlocks), config::kThreads, 0, st>>>(g);
  } else {
    // Every rank launches the same grid: it depends on rows and the knobs only.
    const int blocks = kf::grid_for(g.rows, config::kWarps, config::kMaxBlocks);
    if (config::kAlgo == algo::push)
      push<<<blocks, config::kThreads, 0, st>>>(g);
    else
      pull<<<blocks, config::kThreads, 0, st>>>(g);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
