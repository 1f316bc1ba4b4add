// A simple correct UVA candidate for moe_combine, pull style and unfused: one kernel
// routes every token (its experts and softmax weights), one block numbers the routed
// pairs in (expert, token) order, a barrier kernel (every rank's x is ready), then one
// kernel computes each element of y from the peers' x, reading each pair's row where its
// position was dispatched; a second barrier keeps every peer's x in place until all
// ranks have read it.
#include <cuda_bf16.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 before the pull, slot 1 at the
// end, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;
uint8_t* g_map = nullptr;       // [E, M]: 1 where token t goes to expert e
float* g_weight = nullptr;      // [E, M]: w(t, e) where routed
int32_t* g_position = nullptr;  // [E, M]: p(t, e) where routed

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// Token t's topk experts (highest logit, ties to the lower index: the strict > keeps the
// lowest of equal maxima) into map, and the softmax of their logits into weight.
__global__ void route_kernel(const float* logits, uint8_t* map, float* weight, int64_t m, int e,
                             int topk) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < m;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float* row = logits + t * e;
    for (int x = 0; x < e; ++x) map[x * m + t] = 0;
    int top = -1;
    for (int k = 0; k < topk; ++k) {
      int best = -1;
      for (int x = 0; x < e; ++x)
        if (!map[x * m + t] && (best < 0 || row[x] > row[best])) best = x;
      map[best * m + t] = 1;
      if (k == 0) top = best;
    }
    float sum = 0.0f;
    for (int x = 0; x < e; ++x)
      if (map[x * m + t]) sum += expf(row[x] - row[top]);
    for (int x = 0; x < e; ++x)
      weight[x * m + t] = map[x * m + t] ? expf(row[x] - row[top]) / sum : 0.0f;
  }
}

// position[f] = the number of set entries of the [E, M] map before f, for set entries.
// One block of 1024: per-thread counts over contiguous stretches, a serial scan of the
// counts, then each thread numbers its stretch.
__global__ void __launch_bounds__(1024)
    position_kernel(const uint8_t* map, int64_t total, int32_t* position) {
  __shared__ int32_t first[1024];
  const int64_t per = (total + 1023) / 1024;
  const int64_t lo = min(total, threadIdx.x * per), hi = min(total, lo + per);
  int32_t count = 0;
  for (int64_t f = lo; f < hi; ++f) count += map[f];
  first[threadIdx.x] = count;
  __syncthreads();
  if (threadIdx.x == 0) {
    int32_t run = 0;
    for (int i = 0; i < 1024; ++i) {
      const int32_t c = first[i];
      first[i] = run;
      run += c;
    }
  }
  __syncthreads();
  int32_t pos = first[threadIdx.x];
  for (int64_t f = lo; f < hi; ++f)
    if (map[f]) position[f] = pos++;
}

struct Layout {
  int64_t m, n, rows, world, local;
  int e, rank;
};

// y[t][k] = sum over the experts x of t of w(t, x) * (the row of position p = p(t, x)):
// held by rank d = min(p / q, world - 1), at offset i = p - d*q of our block there, in
// sub-chunk l = min(i / C(d), L - 1), row world*l*C(d) + rank*n(d, l) + (i - l*C(d)).
__global__ void pull_kernel(kf::Peers<const __nv_bfloat16> x, const uint8_t* map,
                            const float* weight, const int32_t* position, __nv_bfloat16* y,
                            Layout g) {
  const int64_t q = g.rows / g.world;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < g.m * g.n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = i / g.n, k = i % g.n;
    float acc = 0.0f;
    for (int e = 0; e < g.e; ++e) {
      if (!map[e * g.m + t]) continue;
      const int64_t p = position[e * g.m + t];
      const int64_t d = min(p / q, g.world - 1), off = p - d * q;
      const int64_t size = d == g.world - 1 ? g.rows - (g.world - 1) * q : q;
      const int64_t chunk = size / g.local, l = min(off / chunk, g.local - 1);
      const int64_t sub = l == g.local - 1 ? size - (g.local - 1) * chunk : chunk;
      const int64_t row = g.world * l * chunk + g.rank * sub + (off - l * chunk);
      acc += weight[e * g.m + t] * __bfloat162float(x[static_cast<int>(d)][row * g.n + k]);
    }
    y[i] = __float2bfloat16_rn(acc);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const size_t cells = static_cast<size_t>(t["logits"].numel);  // M * E
  g_sig = kf::make_signals(comm, 2);
  g_map = comm.alloc_array<uint8_t>(cells);
  g_weight = comm.alloc_array<float>(cells);
  g_position = comm.alloc_array<int32_t>(cells);
  return g_sig.local && g_map && g_weight && g_position ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& logits = t["logits"];
  kf::Tensor& y = t["y"];
  Layout g;
  g.m = logits.shape[0];
  g.n = y.shape[1];
  g.e = static_cast<int>(t.iparam("E"));
  g.rows = g.m * t.iparam("topk");
  g.world = comm.world;
  g.local = g.e / comm.world;
  g.rank = comm.rank;
  const uint32_t epoch = kf::next_epoch();
  cudaStream_t st = comm.stream();
  route_kernel<<<blocks_for(g.m), 256, 0, st>>>(logits.ptr<const float>(), g_map, g_weight, g.m,
                                                g.e, static_cast<int>(t.iparam("topk")));
  position_kernel<<<1, 1024, 0, st>>>(g_map, g.e * g.m, g_position);
  kf::launch_barrier(g_sig, 0, epoch, st);
  pull_kernel<<<blocks_for(g.m * g.n), 256, 0, st>>>(kf::peers(comm, x.ptr<const __nv_bfloat16>()),
                                                     g_map, g_weight, g_position,
                                                     y.ptr<__nv_bfloat16>(), g);
  kf::launch_barrier(g_sig, 1, epoch, st);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
