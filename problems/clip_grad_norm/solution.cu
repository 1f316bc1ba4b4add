// clip_grad_norm, expert kernel on kf/: norm = sqrt(sum over ranks and g0, g1, g2 of g^2),
// y_k = bf16(g_k * coef) with coef = max_norm / norm when norm > max_norm, else 1.
//
// Two kernels, because every output element depends on every input element of every rank
// and blocks of one rank must never wait for each other:
// 1. squares: a wide grid (no waits) sums g^2 of the three gradients in fp32, 16-byte
//    vectors, kUnroll loads in flight per thread; each block leaves its partial and bumps
//    a self-wrapping counter (atomicInc), and the last block to arrive adds the partials
//    up in double, stores the sum into slot `rank` of every rank's sums (pull: into our
//    own) and signals every rank. No block waits: the last one simply finds the others
//    done (threadfence reduction).
// 2. scale: KF_BLOCKS blocks wait for every rank's signal, add the world sums in rank
//    order (the same bits on every rank), take the norm and coef, and write y_k, reading
//    g_k again (from L2: the squares kernel just read it).
// Against the baseline (about twenty launches, a host synchronization on the comparison
// and an fp32 copy of each gradient) it reads g twice, writes y once, launches twice.
//
// Safety. The sums have two halves used by alternate calls (the epoch's parity). A rank
// writes half e%2 (its own or a peer's) in call e only after its call e-1 scale kernel saw
// every peer's call e-1 signal, which each peer sent after its call e-2 scale kernel (the
// last reader of that half) finished. Nobody else reads our g or writes our y or norm, so
// that one signal per call is the whole protocol.
#include <kf/kf.cuh>

// Knobs (kforge's template search sets them with #defines in front; the defaults are
// the expert kernel as shipped).
#ifndef KF_ALGO
#define KF_ALGO push  // push (the sum into every rank's slot) | pull (read from every rank)
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32  // grid of the scale kernel, the one that waits
#endif
#ifndef KF_THREADS
#define KF_THREADS 512  // threads per block of both kernels, a multiple of 32
#endif

namespace clip {

using bf16 = __nv_bfloat16;

enum class algo { push, pull };

struct config {
  static constexpr algo kAlgo = algo::KF_ALGO;
  static constexpr int kThreads = KF_THREADS;
  static constexpr int kMaxBlocks = KF_BLOCKS;
  static constexpr int kSumBlocks = 264;  // squares kernel: two blocks per SM of an H100
  static constexpr int kUnroll = 4;       // vectors per thread in flight
  static constexpr int kReady = 0;        // the one signal slot: this call's sum is there
  static constexpr int kSlots = 1;
};
static_assert(config::kThreads % 32 == 0, "KF_THREADS must be a multiple of 32");

struct globals {
  kf::SignalSet sig;
  const bf16* g[3];
  bf16* y[3];
  float* norm;
  int64_t n;               // elements per gradient
  kf::Peers<double> sums;  // this call's half of every rank's sums: [world] (pull: [1])
  float* partials;         // [kSumBlocks], ours
  unsigned int* arrivals;  // ours: blocks of the squares kernel done, wraps to 0
  float max_norm;
  uint32_t epoch;
  bool vec[3];  // g_k and y_k share their offset within 16 bytes
};

// The sum of v over the block (double or float); every thread gets it.
template <class F>
__device__ F block_sum(F v) {
  __shared__ F warp_sums[config::kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  F total = 0;
  for (int w = 0; w < config::kThreads / 32; ++w) total += warp_sums[w];
  __syncthreads();  // warp_sums is free again
  return total;
}

// Scalars before the first 16-byte boundary of p (bf16 is 2-byte aligned: at most 7).
__device__ __forceinline__ int64_t head_of(const bf16* p, int64_t n) {
  return kf::head_elems(reinterpret_cast<uintptr_t>(p), sizeof(bf16), n);
}

// This thread's share of the sum of g^2 over n elements of g.
__device__ float squares_of(const bf16* g, int64_t n, int64_t tid, int64_t threads) {
  constexpr int U = config::kUnroll;
  const int64_t head = head_of(g, n), nvec = (n - head) / 8;
  const uint4* v4 = reinterpret_cast<const uint4*>(g + head);
  float s = 0.0f;
  for (int64_t v0 = tid; v0 < nvec; v0 += U * threads) {
    uint4 raw[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      raw[u] = v0 + u * threads < nvec ? kf::ld16(v4 + v0 + u * threads) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const float2 p[4] = {__bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw[u].x)),
                           __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw[u].y)),
                           __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw[u].z)),
                           __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw[u].w))};
#pragma unroll
      for (int k = 0; k < 4; ++k) s += p[k].x * p[k].x + p[k].y * p[k].y;
    }
  }
  for (int64_t i = tid; i < head; i += threads)
    s += __bfloat162float(g[i]) * __bfloat162float(g[i]);
  for (int64_t i = head + nvec * 8 + tid; i < n; i += threads)
    s += __bfloat162float(g[i]) * __bfloat162float(g[i]);
  return s;
}

// The last block: our sum of squares, into slot `rank` of every rank's sums (push) or our
// own (pull), then the signal.
__device__ void publish(const globals& g) {
  double s = 0;
  for (int b = threadIdx.x; b < gridDim.x; b += blockDim.x) s += __ldcg(g.partials + b);
  s = block_sum(s);
  if (threadIdx.x != 0) return;
  const int w = g.sig.world, me = g.sig.rank;
  if (config::kAlgo == algo::push)
    for (int r = 0; r < w; ++r) g.sums[r][me] = s;
  else
    g.sums[me][0] = s;
  kf::signal_all(g.sig, config::kReady, g.epoch);  // fences the stores above first
}

__global__ void __launch_bounds__(config::kThreads) squares(const __grid_constant__ globals g) {
  const int64_t tid = kf::grid_tid(), threads = kf::grid_threads();
  float s = 0.0f;
  for (int k = 0; k < 3; ++k) s += squares_of(g.g[k], g.n, tid, threads);
  s = block_sum(s);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    g.partials[blockIdx.x] = s;
    __threadfence();  // the partial is visible before the count says so
    last = atomicInc(g.arrivals, gridDim.x - 1) == gridDim.x - 1;  // wraps to 0 for next call
  }
  __syncthreads();
  if (!last) return;
  __threadfence();  // every other block's partial, counted before our increment
  publish(g);
}

// y = bf16(g * coef) over n elements; 16-byte vectors when g and y are co-aligned.
__device__ void scale_one(const bf16* g, bf16* y, int64_t n, bool vec, float coef, int64_t tid,
                          int64_t threads) {
  constexpr int U = config::kUnroll;
  const int64_t head = vec ? head_of(g, n) : n, nvec = (n - head) / 8;
  const uint4* g4 = reinterpret_cast<const uint4*>(g + head);
  uint4* y4 = reinterpret_cast<uint4*>(y + head);
  for (int64_t v0 = tid; v0 < nvec; v0 += U * threads) {
    uint4 raw[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (v0 + u * threads < nvec) raw[u] = kf::ld16_stream(g4 + v0 + u * threads);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (v0 + u * threads >= nvec) continue;
      __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&raw[u]);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(h[k]);
        h[k] = __floats2bfloat162_rn(f.x * coef, f.y * coef);
      }
      kf::st16(y4 + v0 + u * threads, raw[u]);
    }
  }
  auto one = [&](int64_t i) { y[i] = __float2bfloat16_rn(__bfloat162float(g[i]) * coef); };
  for (int64_t i = tid; i < head; i += threads) one(i);
  for (int64_t i = head + nvec * 8 + tid; i < n; i += threads) one(i);
}

__global__ void __launch_bounds__(config::kThreads) scale(const __grid_constant__ globals g) {
  __shared__ float coef;
  if (threadIdx.x == 0) {
    const int w = g.sig.world;
    kf::wait_all(g.sig, config::kReady, g.epoch);  // every rank's sum is this call's
    double total = 0;                              // rank order: the same bits on every rank
    for (int r = 0; r < w; ++r)
      total += config::kAlgo == algo::push ? __ldcg(g.sums[g.sig.rank] + r) : __ldcg(g.sums[r]);
    const float norm = static_cast<float>(sqrt(total));
    coef = norm > g.max_norm ? g.max_norm / norm : 1.0f;  // fp32, as the reference
    if (blockIdx.x == 0) *g.norm = norm;
  }
  __syncthreads();
  const int64_t tid = kf::grid_tid(), threads = kf::grid_threads();
  for (int k = 0; k < 3; ++k) scale_one(g.g[k], g.y[k], g.n, g.vec[k], coef, tid, threads);
}

// Set in kf_setup.
static kf::SignalSet g_sig;
static double* g_sums = nullptr;  // [2 halves][push: world, pull: 1]
static float* g_partials = nullptr;
static unsigned int* g_arrivals = nullptr;

int setup(kf::Comm& comm) {
  g_sig = kf::make_signals(comm, config::kSlots);
  const int per_half = config::kAlgo == algo::push ? comm.world : 1;
  g_sums = comm.alloc_array<double>(static_cast<size_t>(2 * per_half));
  g_partials = comm.alloc_array<float>(config::kSumBlocks);
  g_arrivals = comm.alloc_array<unsigned int>(1);
  // Both kernels loaded now: the scale kernel waits on the squares kernels of the peers.
  cudaFuncAttributes a;
  if (cudaFuncGetAttributes(&a, squares) != cudaSuccess ||
      cudaFuncGetAttributes(&a, scale) != cudaSuccess)
    return 1;
  return g_sig.local && g_sums && g_partials && g_arrivals ? 0 : 1;
}

int run(kf::Comm& comm, kf::Tensors& t) {
  globals g{};
  g.sig = g_sig;
  const char* in[3] = {"g0", "g1", "g2"};
  const char* out[3] = {"y0", "y1", "y2"};
  g.n = t["g0"].numel;
  for (int k = 0; k < 3; ++k) {
    g.g[k] = t[in[k]].ptr<const bf16>();
    g.y[k] = t[out[k]].ptr<bf16>();
    g.vec[k] = kf::co_aligned16(g.g[k], g.y[k]);
  }
  g.norm = t["norm"].ptr<float>();
  g.epoch = kf::next_epoch();
  const int per_half = config::kAlgo == algo::push ? comm.world : 1;
  g.sums = kf::peers(comm, g_sums + (g.epoch & 1u) * per_half);
  g.partials = g_partials;
  g.arrivals = g_arrivals;
  g.max_norm = static_cast<float>(t.param("max_norm", 1.0));
  const int64_t work = 3 * kf::ceil_div(g.n, 8);  // 16-byte vectors
  squares<<<kf::grid_for(work, config::kThreads, config::kSumBlocks), config::kThreads, 0,
            comm.stream()>>>(g);
  scale<<<kf::grid_for(work, config::kThreads, config::kMaxBlocks), config::kThreads, 0,
          comm.stream()>>>(g);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace clip

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& /*t*/) {
  return clip::setup(comm);
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return clip::run(comm, t);
}
