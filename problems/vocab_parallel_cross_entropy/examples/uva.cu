// A simple correct UVA candidate for vocab_parallel_cross_entropy: one exchange of three
// floats per token instead of PyTorch's three all-reduces.
//   barrier 0: every rank has entered the call (rank 0's target is this call's)
//   stats_kernel: per token, our shard's max m, the sum of exp(z - m) over our shard, and
//     the label's logit if the label is in our shard, into our symmetric scratch
//   barrier 1: every rank's triples are written
//   loss_kernel: per token, read the world triples: M = max of the m, S = sum of
//     s * exp(m - M), loss = log(S) + M - z[label] (from the label's owner), in fp32
//   barrier 2: nobody rewrites its triples or its target while a peer still reads them
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <kf/kf.cuh>

namespace {

using bf16 = __nv_bfloat16;

// kf's one-block barrier kernel (<kf/signal.cuh>): slots 0, 1 and 2 as above, with one
// epoch per call, so its words never need a reset.
kf::SignalSet g_sig;
float* g_stats = nullptr;  // [rows][3]: max, sum of exp(z - max), label logit (its owner's)

constexpr int kThreads = 256;
constexpr int kRowsPerBlock = kThreads / 32;  // one warp per token in stats_kernel

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One warp per token: two passes over its vl logits (max, then the sum of exponentials).
__global__ void stats_kernel(const bf16* x, const int64_t* label, float* stats, int64_t rows,
                             int64_t vl, int64_t start) {
  const int64_t row = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const bf16* z = x + row * vl;
  float m = -INFINITY;
  for (int64_t v = lane; v < vl; v += 32) m = fmaxf(m, __bfloat162float(z[v]));
  m = warp_max(m);
  float s = 0.0f;
  for (int64_t v = lane; v < vl; v += 32) s += expf(__bfloat162float(z[v]) - m);
  s = warp_sum(s);
  if (lane == 0) {
    const int64_t c = label[row] - start;
    stats[3 * row] = m;
    stats[3 * row + 1] = s;
    stats[3 * row + 2] = c >= 0 && c < vl ? __bfloat162float(z[c]) : 0.0f;
  }
}

// One thread per token.
__global__ void loss_kernel(kf::Peers<const float> stats, const int64_t* label, bf16* loss,
                            int64_t rows, int64_t vl, int world) {
  for (int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float top = -INFINITY;
    for (int r = 0; r < world; ++r) top = fmaxf(top, stats[r][3 * row]);
    float s = 0.0f;
    for (int r = 0; r < world; ++r) s += stats[r][3 * row + 1] * expf(stats[r][3 * row] - top);
    const int owner = static_cast<int>(label[row] / vl);
    loss[row] = __float2bfloat16_rn(logf(s) + top - stats[owner][3 * row + 2]);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const size_t rows = static_cast<size_t>(t["logits"].shape[0] * t["logits"].shape[1]);
  g_sig = kf::make_signals(comm, 3);
  g_stats = comm.alloc_array<float>(3 * rows);
  return g_sig.local && g_stats ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& logits = t["logits"];
  const int64_t rows = logits.shape[0] * logits.shape[1], vl = logits.shape[2];
  const int64_t* label = comm.peer(t["target"].ptr<const int64_t>(), 0);  // rank 0's labels
  const uint32_t epoch = kf::next_epoch();
  cudaStream_t st = comm.stream();
  kf::launch_barrier(g_sig, 0, epoch, st);
  stats_kernel<<<static_cast<int>((rows + kRowsPerBlock - 1) / kRowsPerBlock), kThreads, 0, st>>>(
      logits.ptr<const bf16>(), label, g_stats, rows, vl, comm.rank * vl);
  kf::launch_barrier(g_sig, 1, epoch, st);
  const int blocks = static_cast<int>((rows + kThreads - 1) / kThreads);
  loss_kernel<<<blocks, kThreads, 0, st>>>(kf::peers(comm, static_cast<const float*>(g_stats)),
                                           label, t["loss"].ptr<bf16>(), rows, vl, comm.world);
  kf::launch_barrier(g_sig, 2, epoch, st);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
