// Fault (problem all_reduce, fp32), planted for the sanitizer (eval/profile.h): the sum is
// right, but the last thread also stores through a pointer 2^36 elements past y, far
// outside every allocation. Verdict: crash (an illegal address); compute-sanitizer
// memcheck names the store's line (the one marked below).
#include <cstdint>
#include <kf/kf.cuh>

namespace {

kf::SignalSet g_sig;

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 1024 ? (b < 1 ? 1 : b) : 1024);
}

__global__ void sum_kernel(kf::Peers<const float> x, float* y, int64_t n, int world) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (int r = 0; r < world; ++r) s += x[r][i];
    y[i] = s;
    if (i == n - 1) y[i + (int64_t{1} << 36)] = s;  // the planted out-of-bounds store
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
                                                       t["y"].ptr<float>(), n, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
