// rope_all_gather, expert kernel on kf/: q_out(every rank)[b][s*S + i] = RoPE(q(s)[b][i])
// with rank s's cos/sin row, k_out the same; computed in fp32 and rounded to bf16 once.
//
// One kernel that embeds and gathers in the same pass. A thread takes 8 consecutive
// elements of one head (16-byte vectors when D % 16 == 0, so that a vector never
// straddles the two halves rotate_half swaps, and every base is aligned; single
// elements otherwise), loads the cos and sin row piece once for q and k, loads q and k
// and their rotate_half partners (d + D/2 or d - D/2), and stores the embedded values
// straight to their place in the outputs: no embedded copy, no flat gather buffer and
// no concatenation pass as in the baseline (two kernels, two NCCL gathers, two copies
// and two more kernels), so each output byte is written once. At world 1 nothing
// crosses and there is no barrier.
//
// push (default): entry barrier (every peer has entered the call, so its outputs hold
// no poison still to come), embed our slice once and store it into slot `rank` of every
// rank's q_out and k_out, peers first; exit barrier (every peer's stores into our
// outputs have landed). pull: entry barrier (every rank's inputs are this call's), embed
// every rank's slice from its inputs into our outputs (world times the arithmetic, and
// the cos/sin rows cross the links too); exit barrier (no peer reads our inputs any
// more). Block b's barriers pair it with block b of every peer (the grid depends on the
// shapes alone); the kernel ends only when every block has passed its exit barrier, so
// the whole of every peer's kernel is past the point the barrier protects.
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped). 32 blocks of 512 threads give PKB's 16384 vectors of
// q (and of k) a vector per thread at world 1.
#ifndef KF_ALGO
#define KF_ALGO push  // push (embed ours once, store to all) | pull (embed every slice)
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 512  // threads per block
#endif

namespace rope_ag {

using bf16 = __nv_bfloat16;

enum class algo { push, pull };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kStart = 0;  // slots [0, kMaxBlocks): entry
  static constexpr int kEnd = kMaxBlocks;
  static constexpr int kSlots = 2 * kMaxBlocks;
};

struct globals {
  kf::SignalSet sig;
  kf::Peers<const bf16> q, k, cos, sin;  // [r]: rank r's inputs
  // [j]: rank (rank + 1 + j) % world's outputs: the peers first, ours last (j = world-1).
  kf::Peers<bf16> q_out, k_out;
  int64_t B, S, H, D;
  uint32_t epoch;
  bool vec;  // D % 16 == 0 and every base on 16 bytes
};

// One rank's inputs, and where its slice goes.
struct Slice {
  const bf16 *q, *k, *cos, *sin;
  int slot;  // the rank that owns the slice: its positions are slot * S ... in the outputs
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

// x * cos + rot * sin for 8 elements, rot = sign * the partner half, rounded once.
__device__ __forceinline__ uint4 rope8(uint4 x, uint4 partner, float sign, const float* c,
                                       const float* s) {
  float xf[8], pf[8];
  unpack8(x, xf);
  unpack8(partner, pf);
#pragma unroll
  for (int e = 0; e < 8; ++e) xf[e] = xf[e] * c[e] + sign * pf[e] * s[e];
  return kf::pack_bf16x8(xf);
}

// Element offset of slice element e (e < B * S * H * D) in the [B, world * S, H, D]
// outputs: batch b's piece of the slice lands at (b * world + slot) * S * H * D.
__device__ __forceinline__ int64_t out_at(const globals& g, int slot, int64_t e) {
  const int64_t piece = g.S * g.H * g.D, b = e / piece;
  return e + (b * (g.sig.world - 1) + slot) * piece;
}

// The slice embedded 8 elements (one 16-byte vector) per step into out[0 .. ndst).
__device__ void embed_vec(const globals& g, const Slice& in, bf16* const* qo, bf16* const* ko,
                          int ndst) {
  const int64_t dv = g.D / 8, h = g.D / 2, units = g.B * g.S * g.H * dv;
  for (int64_t u = kf::grid_tid(); u < units; u += kf::grid_threads()) {
    const int64_t e = u * 8, d0 = u % dv * 8, row = u / (g.H * dv) * g.D + d0;  // cos/sin
    const bool low = d0 < h;  // rot = -x[d + h] below h, x[d - h] from h on
    const int64_t pe = low ? e + h : e - h;
    const uint4 cv = __ldg(reinterpret_cast<const uint4*>(in.cos + row));
    const uint4 sv = __ldg(reinterpret_cast<const uint4*>(in.sin + row));
    const uint4 qv = __ldg(reinterpret_cast<const uint4*>(in.q + e));
    const uint4 qp = __ldg(reinterpret_cast<const uint4*>(in.q + pe));
    const uint4 kv = __ldg(reinterpret_cast<const uint4*>(in.k + e));
    const uint4 kp = __ldg(reinterpret_cast<const uint4*>(in.k + pe));
    float c[8], s[8];
    unpack8(cv, c);
    unpack8(sv, s);
    const float sign = low ? -1.f : 1.f;
    const uint4 qr = rope8(qv, qp, sign, c, s), kr = rope8(kv, kp, sign, c, s);
    const int64_t at = out_at(g, in.slot, e);
    for (int d = 0; d < ndst; ++d) {
      kf::st16(qo[d] + at, qr);
      kf::st16(ko[d] + at, kr);
    }
  }
}

// The same one element per step: any even D, any alignment.
__device__ void embed_scalar(const globals& g, const Slice& in, bf16* const* qo, bf16* const* ko,
                             int ndst) {
  const int64_t h = g.D / 2, n = g.B * g.S * g.H * g.D;
  for (int64_t e = kf::grid_tid(); e < n; e += kf::grid_threads()) {
    const int64_t d = e % g.D, row = e / (g.H * g.D) * g.D + d;
    const bool low = d < h;
    const int64_t pe = low ? e + h : e - h;
    const float c = __bfloat162float(in.cos[row]), s = __bfloat162float(in.sin[row]);
    const float sign = low ? -1.f : 1.f;
    const bf16 qr =
        __float2bfloat16_rn(__bfloat162float(in.q[e]) * c + sign * __bfloat162float(in.q[pe]) * s);
    const bf16 kr =
        __float2bfloat16_rn(__bfloat162float(in.k[e]) * c + sign * __bfloat162float(in.k[pe]) * s);
    const int64_t at = out_at(g, in.slot, e);
    for (int j = 0; j < ndst; ++j) {
      qo[j][at] = qr;
      ko[j][at] = kr;
    }
  }
}

__device__ __forceinline__ void embed(const globals& g, int r, bf16* const* qo, bf16* const* ko,
                                      int ndst) {
  const Slice in{g.q[r], g.k[r], g.cos[r], g.sin[r], r};
  if (g.vec)
    embed_vec(g, in, qo, ko, ndst);
  else
    embed_scalar(g, in, qo, ko, ndst);
}

__global__ void __launch_bounds__(config::kThreads) kernel(const __grid_constant__ globals g) {
  const int w = g.sig.world, me = g.sig.rank;
  // push: every peer's outputs are writable; pull: every peer's inputs are this call's.
  if (w > 1) kf::barrier(g.sig, config::kStart + blockIdx.x, g.epoch);
  if (config::kAlgo == algo::push || w == 1) {
    embed(g, me, g.q_out.ptr, g.k_out.ptr, w);  // into every rank, ours last
  } else {
    for (int k = 1; k <= w; ++k)  // the peers' slices first, from the next rank on
      embed(g, (me + k) % w, g.q_out.ptr + (w - 1), g.k_out.ptr + (w - 1), 1);
  }
  // push: every peer's stores into our outputs landed; pull: no peer reads our inputs.
  if (w > 1) kf::barrier(g.sig, config::kEnd + blockIdx.x, g.epoch);
}

static kf::SignalSet g_sig;

int run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& q = t["q"];
  const int w = comm.world;
  globals g{};
  g.sig = g_sig;
  g.q = kf::peers(comm, q.ptr<const bf16>());
  g.k = kf::peers(comm, t["k"].ptr<const bf16>());
  g.cos = kf::peers(comm, t["cos"].ptr<const bf16>());
  g.sin = kf::peers(comm, t["sin"].ptr<const bf16>());
  for (int j = 0; j < w; ++j) {
    g.q_out.ptr[j] = comm.peer(t["q_out"].ptr<bf16>(), (comm.rank + 1 + j) % w);
    g.k_out.ptr[j] = comm.peer(t["k_out"].ptr<bf16>(), (comm.rank + 1 + j) % w);
  }
  g.B = q.shape[0];
  g.S = q.shape[1];
  g.H = q.shape[2];
  g.D = q.shape[3];
  g.epoch = kf::next_epoch();
  g.vec = g.D % 16 == 0;
  for (int r = 0; r < w; ++r)
    g.vec = g.vec && kf::aligned16(g.q[r]) && kf::aligned16(g.k[r]) && kf::aligned16(g.cos[r]) &&
            kf::aligned16(g.sin[r]) && kf::aligned16(g.q_out[r]) && kf::aligned16(g.k_out[r]);
  // The same grid on every rank, whichever path vec takes: block b pairs with block b.
  const int blocks = kf::grid_for(kf::ceil_div(q.numel, 8), config::kThreads, config::kMaxBlocks);
  kernel<<<blocks, config::kThreads, 0, comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace rope_ag

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& /*t*/) {
  rope_ag::g_sig = kf::make_signals(comm, rope_ag::config::kSlots);
  return rope_ag::g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return rope_ag::run(comm, t);
}
