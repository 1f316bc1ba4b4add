// all_reduce with no flags at all: each rank sums the ranks' x straight through the peer
// pointers, with no barrier before or after. Correct at world 1 only (there is no peer to
// wait for); bench/profile_gpu.sh's `replay` part profiles it beside the expert kernel
// to tell a replay that fails on flags from one that fails on anything else.
#include <cstdint>
#include <kf/kf.cuh>

namespace {

__global__ void sum_kernel(kf::Peers<const float> x, float* y, int64_t n, int world) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    float s = 0.0f;
    for (int r = 0; r < world; ++r) s += x[r][i];
    y[i] = s;
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm&, kf::Tensors&) {
  return 0;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const int64_t n = t["y"].numel;
  sum_kernel<<<264, 512, 0, comm.stream()>>>(kf::peers(comm, t["x"].ptr<const float>()),
                                             t["y"].ptr<float>(), n, comm.world);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
