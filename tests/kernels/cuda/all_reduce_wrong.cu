// Fault (problem all_reduce, fp32): sums with float4 loads and forgets the n % 4 tail, so
// for odd n the last elements of y keep their poison at every world size (1, 2, 4 ...).
// Verdict: mismatch on y at the last indices (e.g. 4096..4098 for n = 4099).
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

__global__ void sum_kernel(kf::Peers<const float> x, float* y, int64_t n, int world) {
  const int64_t n4 = n / 4;  // the bug: elements n4 * 4 .. n - 1 are never written
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float4 s = make_float4(0, 0, 0, 0);
    for (int r = 0; r < world; ++r) {
      const float4 v = reinterpret_cast<const float4*>(x[r])[i];
      s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
    }
    reinterpret_cast<float4*>(y)[i] = s;
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
  sum_kernel<<<blocks_for(n / 4), 256, 0, comm.stream()>>>(
      kf::peers(comm, t["x"].ptr<const float>()), t["y"].ptr<float>(), n, comm.world);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
