// quantized_grad_all_reduce, expert kernel on kf/: y = the mean over ranks of each rank's
// block-wise int8 quantize-dequantize of its x, in one kernel.
//
// Work split: CUDA block c owns the quantization blocks kf::split(nb, grid, c), on every
// rank. A group of lanes (kf::group_lanes: up to a warp) quantizes one quantization block:
// each lane loads 4 elements a step (1 when block % 4 != 0 or x, y are not 16-byte
// aligned), the group's shuffles give the amax, and the codes are formed with kf/quant.cuh
// (IEEE divisions, ties to even), kUnroll quantization blocks per group in flight.
// push_q8 (default): the int8 codes and the fp32 scale go into slot `rank` of every rank's
// workspace (about a quarter of the fp32 bytes); after block c's barrier, block c
// dequantizes its range of every slot and averages in rank order (the same bits on every
// rank). pull: the dequantized fp32 values go into our own workspace, and after the
// barrier block c reads its range of every rank's (PyTorch's bytes, one-shot).
// World 1: no workspace and no barrier; the group writes y = code * scale directly, on a
// grid of as many blocks as the GPU holds at once (KF_BLOCKS bounds the grid only where
// blocks wait on peers: emulated ranks sharing one GPU must all be resident).
//
// Safety. Block c's barrier pairs exactly the writers (block c of every rank) of what
// block c reads. The workspace has two halves used by alternate calls (the epoch's
// parity): a rank writes half e%2 of a peer in call e only after its call e-1 kernel
// finished, in which block c passed the barrier that the peer's call e-1 kernel signalled,
// after the peer's call e-2 kernel (the last reader of that half) had finished. Peers
// never touch our x or y, so there is no exit barrier. Where two halves do not fit the
// workspace (block of 1 or 2 elements, huge n), one half and an exit barrier instead.
#include <kf/kf.cuh>
#include <kf/quant.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped).
#ifndef KF_ALGO
#define KF_ALGO push_q8  // push_q8 (codes and scales into the peers) | pull (fp32 from them)
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 512  // threads per block, a multiple of 32
#endif

namespace qgar {

enum class algo { push_q8, pull };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kMid = 0;           // slots [0, kMaxBlocks): data is there
  static constexpr int kEnd = kMaxBlocks;  // [kMaxBlocks, 2 kMaxBlocks): one-half exit
  static constexpr int kSlots = 2 * kMaxBlocks;
  static constexpr int kUnroll = 4;    // quantization blocks per group in flight
  static constexpr int kMaxWorld = 8;  // problem.json's largest world
};
static_assert(config::kThreads % 32 == 0, "KF_THREADS must be a multiple of 32");

struct globals {
  kf::SignalSet sig;
  const float* x;
  float* y;
  kf::Peers<char> ws;  // this call's half of every rank's workspace (world > 1)
  int64_t n, block, nb;
  int64_t slot_bytes;   // push_q8: one rank's codes then scales; pull: our fp32 values
  int64_t codes_bytes;  // push_q8: where the scales start in a slot
  int group;            // lanes per quantization block
  bool exit_barrier;    // one workspace half: peers may still read it after our barrier
  uint32_t epoch;
};

// Rank `dst`'s copy of slot `src`: codes, scales (push_q8) or fp32 values (pull, src 0).
__device__ __forceinline__ int8_t* codes_of(const globals& g, int dst, int src) {
  return reinterpret_cast<int8_t*>(g.ws[dst] + src * g.slot_bytes);
}
__device__ __forceinline__ float* scales_of(const globals& g, int dst, int src) {
  return reinterpret_cast<float*>(g.ws[dst] + src * g.slot_bytes + g.codes_bytes);
}

// v = x[i, i + E) clipped to [i, end), zeros past it (zeros leave the amax alone).
template <int E>
__device__ __forceinline__ void load(const float* x, int64_t i, int64_t end, float (&v)[E]) {
  if constexpr (E == 4) {
    if (i + 4 <= end) {
      const float4 f = __ldg(reinterpret_cast<const float4*>(x + i));
      v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < E; ++k) v[k] = i + k < end ? __ldg(x + i + k) : 0.0f;
}

// Codes of x[i, min(i + E, end)) in quantization block qb, sent where the algorithm says.
template <int E>
__device__ __forceinline__ void emit(const globals& g, int64_t qb, int64_t i, int64_t end,
                                     const float (&v)[E], float scale, bool lead) {
  int q[E];
#pragma unroll
  for (int k = 0; k < E; ++k) q[k] = kf::i8_code(v[k], scale);
  const bool full = i + E <= end;
  const int w = g.sig.world, me = g.sig.rank;
  if (w == 1 || config::kAlgo == algo::pull) {  // dequantized: into y or our workspace
    float* d = w == 1 ? g.y : reinterpret_cast<float*>(g.ws[me]);
    if constexpr (E == 4) {
      if (full) {
        *reinterpret_cast<float4*>(d + i) =
            make_float4(kf::i8_value(q[0], scale), kf::i8_value(q[1], scale),
                        kf::i8_value(q[2], scale), kf::i8_value(q[3], scale));
        return;
      }
    }
#pragma unroll
    for (int k = 0; k < E; ++k)
      if (i + k < end) d[i + k] = kf::i8_value(q[k], scale);
    return;
  }
  for (int j = 1; j <= w; ++j) {  // peers first, from the next rank on; ourselves last
    const int dst = (me + j) % w;
    int8_t* c = codes_of(g, dst, me);
    if constexpr (E == 4) {
      if (full) {
        *reinterpret_cast<uint32_t*>(c + i) = kf::pack_i8x4(q[0], q[1], q[2], q[3]);
        if (lead) scales_of(g, dst, me)[qb] = scale;
        continue;
      }
    }
#pragma unroll
    for (int k = 0; k < E; ++k)
      if (i + k < end) c[i + k] = static_cast<int8_t>(q[k]);
    if (lead) scales_of(g, dst, me)[qb] = scale;
  }
}

// Quantizes blocks [qb0, qb1): group `gid` takes blocks base + u * groups + gid. The loop
// bounds are uniform over the CUDA block, so every lane reaches the shuffles.
template <int E>
__device__ void quantize(const globals& g, int64_t qb0, int64_t qb1) {
  constexpr int U = config::kUnroll;
  const int G = g.group, sub = threadIdx.x & (G - 1);
  const int gid = threadIdx.x / G, groups = blockDim.x / G;
  const int64_t stride = static_cast<int64_t>(E) * G;  // elements per group step
  for (int64_t base = qb0; base < qb1; base += static_cast<int64_t>(groups) * U) {
    int64_t begin[U], end[U];
    float v[U][E], amax[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {  // first step of U blocks: U loads in flight
      const int64_t qb = base + u * groups + gid;
      begin[u] = qb * g.block;
      end[u] = qb < qb1 ? kf::min64(g.n, begin[u] + g.block) : begin[u];
      load<E>(g.x, begin[u] + E * sub, end[u], v[u]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      amax[u] = 0.0f;
#pragma unroll
      for (int k = 0; k < E; ++k) amax[u] = fmaxf(amax[u], fabsf(v[u][k]));
      for (int64_t i = begin[u] + E * sub + stride; i < end[u]; i += stride) {  // long blocks
        float t[E];
        load<E>(g.x, i, end[u], t);
#pragma unroll
        for (int k = 0; k < E; ++k) amax[u] = fmaxf(amax[u], fabsf(t[k]));
      }
      amax[u] = kf::group_max(amax[u], G);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t qb = base + u * groups + gid, i0 = begin[u] + E * sub;
      if (qb >= qb1) continue;
      const float scale = kf::i8_scale(amax[u]);
      if (i0 < end[u]) emit<E>(g, qb, i0, end[u], v[u], scale, sub == 0);
      for (int64_t i = i0 + stride; i < end[u]; i += stride) {  // long blocks: reload (L1)
        float t[E];
        load<E>(g.x, i, end[u], t);
        emit<E>(g, qb, i, end[u], t, scale, false);
      }
    }
  }
}

// acc[k] += rank r's dequantized value of element i + k (k < E, i + k < e1).
template <int E>
__device__ __forceinline__ void add_rank(const globals& g, int r, int64_t i, int64_t e1,
                                         float (&acc)[E]) {
  const bool full = E == 4 && i + 4 <= e1;
  if (config::kAlgo == algo::pull) {
    const float* d = reinterpret_cast<const float*>(g.ws[r]);
    if (full) {
      const uint4 raw = kf::ld16_stream(d + i);
      const float* f = reinterpret_cast<const float*>(&raw);
#pragma unroll
      for (int k = 0; k < E; ++k) acc[k] += f[k];
    } else {
#pragma unroll
      for (int k = 0; k < E; ++k)
        if (i + k < e1) acc[k] += d[i + k];
    }
    return;
  }
  const int8_t* c = codes_of(g, g.sig.rank, r);
  const float* s = scales_of(g, g.sig.rank, r);
  if (full) {  // block % 4 == 0 and i % 4 == 0: one quantization block, one scale
    const uint32_t word = *reinterpret_cast<const uint32_t*>(c + i);
    const float scale = s[i / g.block];
#pragma unroll
    for (int k = 0; k < E; ++k) acc[k] += kf::i8_value(kf::unpack_i8(word, k), scale);
  } else {
#pragma unroll
    for (int k = 0; k < E; ++k)
      if (i + k < e1) acc[k] += kf::i8_value(c[i + k], s[(i + k) / g.block]);
  }
}

// y[e0, e1) = (sum over ranks, in rank order, of their dequantized values) / world.
template <int E>
__device__ void average(const globals& g, int64_t e0, int64_t e1) {
  const int w = g.sig.world;
  for (int64_t i = e0 + static_cast<int64_t>(E) * threadIdx.x; i < e1;
       i += static_cast<int64_t>(E) * blockDim.x) {
    float acc[E];
#pragma unroll
    for (int k = 0; k < E; ++k) acc[k] = 0.0f;
#pragma unroll
    for (int r = 0; r < config::kMaxWorld; ++r)
      if (r < w) add_rank<E>(g, r, i, e1, acc);
#pragma unroll
    for (int k = 0; k < E; ++k) acc[k] = acc[k] / static_cast<float>(w);
    if constexpr (E == 4) {
      if (i + 4 <= e1) {
        *reinterpret_cast<float4*>(g.y + i) = make_float4(acc[0], acc[1], acc[2], acc[3]);
        continue;
      }
    }
#pragma unroll
    for (int k = 0; k < E; ++k)
      if (i + k < e1) g.y[i + k] = acc[k];
  }
}

template <int E>
__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  const kf::Range q = kf::split(g.nb, gridDim.x, blockIdx.x);
  quantize<E>(g, q.begin, q.end);
  if (g.sig.world == 1) return;                            // y is written
  kf::barrier(g.sig, config::kMid + blockIdx.x, g.epoch);  // block c of every rank wrote
  average<E>(g, q.begin * g.block, kf::min64(g.n, q.end * g.block));
  if (g.exit_barrier) kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);
}

// Set in kf_setup for the shapes it was given.
static kf::SignalSet g_sig;
static char* g_ws = nullptr;
static int64_t g_n = 0, g_block = 1, g_nb = 0, g_slot = 0, g_codes = 0, g_half = 0;
static bool g_two_halves = true;
static int g_world1_blocks = config::kMaxBlocks;  // world 1: the GPU's co-resident blocks

int setup(kf::Comm& comm, const kf::Tensor& X, int64_t block) {
  g_n = X.numel;
  g_block = block;
  if (g_block < 1) return 1;
  g_nb = kf::ceil_div(g_n, g_block);
  if (comm.world > config::kMaxWorld) return 1;  // average() keeps one term per rank
  g_sig = kf::make_signals(comm, config::kSlots);
  if (!g_sig.local) return 1;
  if (comm.world == 1) {
    const int fit = kf::max_coresident_blocks(kernel<4>, config::kThreads, 0);
    if (fit > 0) g_world1_blocks = fit;
    return 0;
  }
  const bool push = config::kAlgo == algo::push_q8;
  g_codes = kf::round_up(g_n, 16);  // slots and scales start on 16 bytes
  g_slot = push ? g_codes + kf::round_up(4 * g_nb, 16) : kf::round_up(4 * g_n, 16);
  g_half = (push ? comm.world : 1) * g_slot;
  // problem.json grants 64 MiB + 4 world (n + nb); keep 1 MiB for the signals. The same
  // numbers on every rank, so every rank makes the same allocation.
  const int64_t room = (int64_t{64} << 20) + 4 * comm.world * (g_n + g_nb) - (int64_t{1} << 20);
  g_two_halves = 2 * g_half <= room;
  g_ws = static_cast<char*>(comm.alloc(static_cast<size_t>((g_two_halves ? 2 : 1) * g_half)));
  return g_ws ? 0 : 1;
}

int run(kf::Comm& comm, const kf::Tensor& X, kf::Tensor& Y) {
  if (X.numel != g_n) return 1;  // not what kf_setup sized for
  globals g{};
  g.sig = g_sig;
  g.x = X.ptr<const float>();
  g.y = Y.ptr<float>();
  g.n = g_n, g.block = g_block, g.nb = g_nb;
  g.slot_bytes = g_slot, g.codes_bytes = g_codes;
  g.epoch = kf::next_epoch();
  g.exit_barrier = !g_two_halves;
  if (comm.world > 1) g.ws = kf::peers(comm, g_ws + (g_two_halves ? (g.epoch & 1u) * g_half : 0));
  // 4 elements a lane: every quantization block (and so every u32 of codes) starts on a
  // multiple of 4, and x, y (and the workspace, by construction) on 16 bytes.
  const bool vec = g_block % 4 == 0 && kf::aligned16(g.x) && kf::aligned16(g.y);
  g.group = kf::group_lanes(g_block, vec ? 4 : 1);
  const int blocks =
      static_cast<int>(kf::min64(g_nb, comm.world == 1 ? g_world1_blocks : config::kMaxBlocks));
  if (vec)
    kernel<4><<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  else
    kernel<1><<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace qgar

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  return qgar::setup(comm, t["x"], t.iparam("block"));
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return qgar::run(comm, t["x"], t["y"]);
}
