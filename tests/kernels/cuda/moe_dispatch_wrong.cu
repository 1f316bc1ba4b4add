// Fault (problem moe_dispatch, bf16): the example (problems/moe_dispatch/examples/uva.cu)
// with every local expert's sub-chunk taken as C(d) = floor(S(d) / L) rows, forgetting
// that the last local expert's takes the remainder: the pull covers world * L * C rows of
// y instead of world * S, and places the last expert's rows with stride C instead of its
// n. At the small size (R = 74) world 1 (L = 8, S = 74, C = 9) and world 2 (L = 4, S =
// 37, C = 9) leave the last rows of y poisoned and misplace others.
// Verdict: mismatch on y, at world 1 and at world 2 (perm and routing_map are right).
#include <cstdint>
#include <kf/kf.cuh>

namespace {

// kf's one-block barrier kernel (<kf/signal.cuh>): slot 0 before the pull, slot 1 at the
// end, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// routing_map[x][t] = 1 for the topk experts of token t (highest logit, ties to the
// lower index: the strict > keeps the lowest of equal maxima).
__global__ void route_kernel(const float* logits, uint8_t* map, int64_t m, int e, int topk) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < m;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    for (int x = 0; x < e; ++x) map[x * m + t] = 0;
    for (int k = 0; k < topk; ++k) {
      int best = -1;
      for (int x = 0; x < e; ++x)
        if (!map[x * m + t] && (best < 0 || logits[t * e + x] > logits[t * e + best])) best = x;
      map[best * m + t] = 1;
    }
  }
}

// perm = the tokens of the map's set entries in row-major (expert, token) order. One
// block of 1024: per-thread counts over contiguous stretches, a shared-memory scan, then
// each thread writes its stretch from its first position on.
__global__ void __launch_bounds__(1024)
    perm_kernel(const uint8_t* map, int64_t m, int64_t total, int32_t* perm) {
  __shared__ int32_t first[1024];
  const int64_t per = (total + 1023) / 1024;
  const int64_t lo = min(total, threadIdx.x * per), hi = min(total, lo + per);
  int32_t count = 0;
  for (int64_t f = lo; f < hi; ++f) count += map[f];
  first[threadIdx.x] = count;
  __syncthreads();
  if (threadIdx.x == 0) {  // exclusive scan, serially: 1024 adds
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
    if (map[f]) perm[pos++] = static_cast<int32_t>(f % m);
}

// Row o of y, o = world*l*C + s*n(l) + j, is row perm(s)[rank*q + l*C + j] of x(s).
struct Layout {
  int64_t q, size, chunk, local, world, vecs;
};
__global__ void pull_kernel(kf::Peers<const uint4> x, kf::Peers<const int32_t> perm, uint4* y,
                            Layout g, int rank) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < g.world * g.local * g.chunk * g.vecs;  // the bug: S(d) - L * C rows a rank short
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = i / g.vecs;
    const int64_t l = o / (g.world * g.chunk);
    const int64_t n = g.chunk;  // the bug: the last local expert has S(d) - (L - 1) * C
    const int64_t k = o - g.world * l * g.chunk, s = k / n, j = k % n;
    const int64_t token = perm[static_cast<int>(s)][rank * g.q + l * g.chunk + j];
    y[i] = x[static_cast<int>(s)][token * g.vecs + i % g.vecs];
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& logits = t["logits"];
  kf::Tensor& y = t["y"];
  kf::Tensor& perm = t["perm"];
  kf::Tensor& map = t["routing_map"];
  const int64_t m = x.shape[0], rows = perm.numel;
  const int e = static_cast<int>(t.iparam("E")), topk = static_cast<int>(t.iparam("topk"));
  Layout g;
  g.world = comm.world;
  g.q = rows / comm.world;
  g.size = y.shape[0] / comm.world;  // S(rank)
  g.local = e / comm.world;
  g.chunk = g.size / g.local;
  g.vecs = x.shape[1] / 8;
  const uint32_t epoch = kf::next_epoch();
  cudaStream_t st = comm.stream();
  route_kernel<<<blocks_for(m), 256, 0, st>>>(logits.ptr<const float>(), map.ptr<uint8_t>(), m, e,
                                              topk);
  perm_kernel<<<1, 1024, 0, st>>>(map.ptr<const uint8_t>(), m, e * m, perm.ptr<int32_t>());
  kf::launch_barrier(g_sig, 0, epoch, st);
  pull_kernel<<<blocks_for(y.shape[0] * g.vecs), 256, 0, st>>>(
      kf::peers(comm, x.ptr<const uint4>()), kf::peers(comm, perm.ptr<const int32_t>()),
      y.ptr<uint4>(), g, comm.rank);
  kf::launch_barrier(g_sig, 1, epoch, st);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
