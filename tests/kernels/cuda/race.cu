// Fault (problem all_reduce, fp32), planted for the sanitizer (eval/profile.h): each block
// sums its 256 elements into shared memory, then every thread stores the element of the
// thread 32 places further on (the next warp's), with no __syncthreads between the write
// and the read. Whether the other warp has written yet varies from call to call: a
// mismatch that differs between calls (or, by luck, none); compute-sanitizer racecheck
// names the two lines (marked below).
#include <cstdint>
#include <kf/kf.cuh>

namespace {

kf::SignalSet g_sig;

__global__ void sum_kernel(kf::Peers<const float> x, float* y, int64_t n, int world) {
  __shared__ float tile[256];
  const int64_t base = blockIdx.x * static_cast<int64_t>(blockDim.x);
  const int t = threadIdx.x;
  float s = 0.0f;
  if (base + t < n)
    for (int r = 0; r < world; ++r) s += x[r][base + t];
  tile[t] = s;  // the planted race: written here ...
  const int u = (t + 32) % blockDim.x;
  if (base + u < n) y[base + u] = tile[u];  // ... and read by another warp, unsynchronized
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
  const int blocks = static_cast<int>((n + 255) / 256);
  sum_kernel<<<blocks, 256, 0, comm.stream()>>>(kf::peers(comm, t["x"].ptr<const float>()),
                                                t["y"].ptr<float>(), n, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
