// Fault (problem reduce_scatter, fp32): sums the right chunk but starts the rank loop at 1,
// leaving rank 0's contribution out (world 1: y = 0), wrong at every world size.
// Verdict: mismatch on y from index 0.
#include <cstdint>
#include <kf/kf.cuh>

namespace {

// Before and after the copy: kf's one-block barrier kernel (<kf/signal.cuh>), slot 0 on
// entry and slot 1 on exit, with one epoch per call, so its words never need a reset.
kf::SignalSet g_sig;

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 1024 ? (b < 1 ? 1 : b) : 1024);
}

__global__ void sum_kernel(kf::Peers<const float> x, float* y, int64_t n, int64_t offset,
                           int world) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (int r = 1; r < world; ++r) s += x[r][offset + i];  // the bug: r = 1
    y[i] = s;
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const int64_t n = t["y"].numel;
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  sum_kernel<<<blocks_for(n), 256, 0, comm.stream()>>>(kf::peers(comm, t["x"].ptr<const float>()),
                                                       t["y"].ptr<float>(), n, comm.rank * n,
                                                       comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
