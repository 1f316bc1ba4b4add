// tp_rms_norm, expert kernel on kf/: y(r)[i][j] = weight(r)[j] * x(r)[i][j] / sqrt(S[i] /
// (world * N) + eps), S[i] the sum of row i's squares over every rank's N columns.
//
// One kernel, a warp per row. Phase 1: the warp sums its row's squares in fp32 (16-byte
// loads when N % 8 == 0 and every base is aligned, scalars otherwise) and lane 0 hands
// the sum on: push stores it into slot `rank` of every rank's sums buffer (posted
// stores, one hop), pull leaves it in our own buffer for the peers to load. One barrier
// (per-block slots: block b handles the same rows on every rank, so block b's peers are
// exactly the writers of what it reads). Phase 2: the warp adds the world sums in rank
// order (the same bits on every rank), re-reads its row (from L1/L2: it read it a moment
// ago) and writes y, rounded to bf16 once. x is read from HBM once, y written once: the
// baseline's ten kernels and fp32 intermediates collapse into one pass.
//
// One barrier per call, none at entry or exit: peers never touch our x, weight or y, and
// the sums alternate between two buffers by the epoch's parity. A rank writes buffer p
// in call k + 2 only after its call k + 1 kernel passed its barrier, which every peer's
// call k + 1 kernel signalled, after its call k kernel (the last reader of buffer p)
// finished: kernels on one stream run in order. At world 1 nothing crosses: each warp
// normalizes its row right after summing it, with no barrier and no buffer.
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped). 32 blocks of 32 warps give PKB's 1024 rows one row per
// warp, so every load of the kernel is in flight at once.
#ifndef KF_ALGO
#define KF_ALGO push  // push (store our sums into every peer) | pull (load the peers' sums)
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 1024  // threads per block, a multiple of 32: a row per warp
#endif

namespace tp_rms_norm {

using bf16 = __nv_bfloat16;

enum class algo { push, pull };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kMid = 0;  // slots [0, kMaxBlocks): the sums of block b's rows are in
  static constexpr int kSlots = kMaxBlocks;
  static constexpr int kUnroll = 4;  // 16-byte loads per lane in flight
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "KF_THREADS: a multiple of 32");
};

struct globals {
  kf::SignalSet sig;
  const bf16* x;  // [M, N], ours
  const bf16* w;  // [N], our shard of the weight
  bf16* y;        // [M, N]
  // This call's sums buffer on every rank. push: [world][M], slot s written by rank s;
  // pull: [M], written by its owner.
  kf::Peers<float> sums;
  int64_t m, n;
  float cols;  // world * N: the columns of the full hidden state
  float eps;
  uint32_t epoch;
  bool vec;  // N % 8 == 0 and x, weight, y start on 16 bytes: every row is vectorizable
};

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ void unpack8(uint4 v, float* f) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 t = __bfloat1622float2(h[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}

// Row i's sum of squares over our N columns, in fp32; every lane of the warp gets it.
// The vector path loads kUnroll vectors per lane before it sums any, so a warp keeps
// 2 KB in flight (a whole row of PKB's N = 1024).
__device__ float row_squares(const globals& g, int64_t i, int lane) {
  const bf16* row = g.x + i * g.n;
  float s = 0.f;
  if (g.vec) {
    const uint4* r4 = reinterpret_cast<const uint4*>(row);
    const int64_t nv = g.n / 8;
    for (int64_t b = 0; b < nv; b += 32 * config::kUnroll) {
      uint4 v[config::kUnroll];
#pragma unroll
      for (int u = 0; u < config::kUnroll; ++u) {
        const int64_t j = b + u * 32 + lane;
        v[u] = j < nv ? __ldg(r4 + j) : make_uint4(0, 0, 0, 0);  // zero bits: 0.0f
      }
#pragma unroll
      for (int u = 0; u < config::kUnroll; ++u) {
        float f[8];
        unpack8(v[u], f);
#pragma unroll
        for (int e = 0; e < 8; ++e) s += f[e] * f[e];
      }
    }
  } else {
    for (int64_t j = lane; j < g.n; j += 32) {
      const float v = __bfloat162float(row[j]);
      s += v * v;
    }
  }
  return warp_sum(s);
}

// y[i][j] = x[i][j] * scale * weight[j] for our N columns, rounded to bf16 once.
__device__ void row_norm(const globals& g, int64_t i, float scale, int lane) {
  const bf16* row = g.x + i * g.n;
  bf16* out = g.y + i * g.n;
  if (g.vec) {
    const uint4* r4 = reinterpret_cast<const uint4*>(row);
    const uint4* w4 = reinterpret_cast<const uint4*>(g.w);
    uint4* o4 = reinterpret_cast<uint4*>(out);
    const int64_t nv = g.n / 8;
    for (int64_t b = 0; b < nv; b += 32 * config::kUnroll) {
      uint4 xv[config::kUnroll], wv[config::kUnroll];
#pragma unroll
      for (int u = 0; u < config::kUnroll; ++u) {
        const int64_t j = b + u * 32 + lane;
        if (j < nv) {
          xv[u] = __ldg(r4 + j);
          wv[u] = __ldg(w4 + j);
        }
      }
#pragma unroll
      for (int u = 0; u < config::kUnroll; ++u) {
        const int64_t j = b + u * 32 + lane;
        if (j >= nv) continue;
        float xf[8], wf[8];
        unpack8(xv[u], xf);
        unpack8(wv[u], wf);
#pragma unroll
        for (int e = 0; e < 8; ++e) xf[e] = xf[e] * scale * wf[e];
        o4[j] = kf::pack_bf16x8(xf);
      }
    }
  } else {
    for (int64_t j = lane; j < g.n; j += 32)
      out[j] = __float2bfloat16_rn(__bfloat162float(row[j]) * scale * __bfloat162float(g.w[j]));
  }
}

// Row i's S over every rank, added in rank order: lane l loads rank l's sum (all loads
// in flight at once), then every lane adds them up through shuffles in the same order.
// The loads bypass L1 (__ldcg): the sums were written by peers during this kernel, and
// another block of this SM may have cached the line before they landed.
__device__ float gathered_sum(const globals& g, int64_t i, int lane) {
  const int w = g.sig.world;
  float total = 0.f;
  for (int base = 0; base < w; base += 32) {
    const int s = base + lane;
    float v = 0.f;
    if (s < w)
      v = __ldcg(config::kAlgo == algo::push ? g.sums[g.sig.rank] + s * g.m + i : g.sums[s] + i);
    const int cnt = w - base < 32 ? w - base : 32;
    for (int k = 0; k < cnt; ++k) total += __shfl_sync(0xffffffffu, v, k);
  }
  return total;
}

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  const int lane = threadIdx.x % 32;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * config::kWarps + threadIdx.x / 32;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * config::kWarps;
  const int w = g.sig.world, me = g.sig.rank;
  if (w == 1) {  // S is our own sum: normalize each row while it is still in L1
    for (int64_t i = first; i < g.m; i += stride)
      row_norm(g, i, rsqrtf(row_squares(g, i, lane) / g.cols + g.eps), lane);
    return;
  }
  for (int64_t i = first; i < g.m; i += stride) {
    const float s = row_squares(g, i, lane);
    if (lane != 0) continue;
    if (config::kAlgo == algo::push) {
      for (int k = 1; k <= w; ++k) g.sums[(me + k) % w][me * g.m + i] = s;  // peers first
    } else {
      g.sums[me][i] = s;
    }
  }
  kf::barrier(g.sig, config::kMid + blockIdx.x, g.epoch);  // block b's rows: every sum is in
  for (int64_t i = first; i < g.m; i += stride)
    row_norm(g, i, rsqrtf(gathered_sum(g, i, lane) / g.cols + g.eps), lane);
}

// Set in kf_setup for the shapes it was given.
static kf::SignalSet g_sig;
static float* g_sums = nullptr;  // [2 parities][half]
static int64_t g_half = 0;       // floats per parity: world * M (push) or M (pull)
static int64_t g_m = 0;

int setup(kf::Comm& comm, const kf::Tensor& X) {
  g_m = X.shape[0];
  g_sig = kf::make_signals(comm, config::kSlots);
  if (!g_sig.local) return 1;
  if (comm.world > 1) {
    g_half = (config::kAlgo == algo::push ? comm.world : 1) * g_m;
    g_sums = comm.alloc_array<float>(static_cast<size_t>(2 * g_half));
    if (!g_sums) return 1;
  }
  return 0;
}

int run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& X = t["x"];
  if (X.shape[0] != g_m) return 1;  // not the shape kf_setup sized the sums for
  globals g{};
  g.sig = g_sig;
  g.x = X.ptr<const bf16>();
  g.w = t["weight"].ptr<const bf16>();
  g.y = t["y"].ptr<bf16>();
  g.m = g_m;
  g.n = X.shape[1];
  g.cols = static_cast<float>(comm.world) * static_cast<float>(g.n);
  g.eps = static_cast<float>(t.param("eps"));
  g.epoch = kf::next_epoch();
  if (comm.world > 1) g.sums = kf::peers(comm, g_sums + (g.epoch & 1u) * g_half);
  g.vec = g.n % 8 == 0 && kf::aligned16(g.x) && kf::aligned16(g.w) && kf::aligned16(g.y);
  // The same grid on every rank (it depends on M alone): block b pairs with block b.
  const int blocks = kf::grid_for(g.m, config::kWarps, config::kMaxBlocks);
  kernel<<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace tp_rms_norm

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  return tp_rms_norm::setup(comm, t["x"]);
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return tp_rms_norm::run(comm, t);
}
