// A simple correct UVA candidate for broadcast: a barrier kernel (the root's x is ready),
// one kernel that copies the root's x into y, and a second barrier (the root's x is not
// regenerated while another rank still reads it).
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

__global__ void copy_kernel(const float* src, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = src[i];
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int root = static_cast<int>(t.iparam("root", 0));
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  copy_kernel<<<blocks_for(y.numel), 256, 0, comm.stream()>>>(comm.peer(x.ptr<const float>(), root),
                                                              y.ptr<float>(), y.numel);
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
