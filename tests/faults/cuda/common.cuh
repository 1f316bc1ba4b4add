// tests/faults/cuda/common.cuh: what the CUDA fault candidates share (bench/gpu_faults.sh
// pastes it in: a candidate is one file). A correct all_reduce (fp32, y = the sum of
// every rank's x read through UVA), kf's barrier kernel on entry and exit, and a kernel
// that keeps the GPU busy for a given time: the "work" the timing cases hide.
#pragma once

#include <cstdint>
#include <kf/kf.cuh>

namespace fault {

inline kf::SignalSet g_sig;
constexpr uint64_t kWorkNs = 500000;  // the half-millisecond each timing case does per call

inline int setup(kf::Comm& comm) {
  g_sig = kf::make_signals(comm, 2);
  return g_sig.local ? 0 : 1;
}

__global__ void busy_kernel(uint64_t ns) {
  const uint64_t start = kf::globaltimer();
  while (kf::globaltimer() - start < ns) {
  }
}

__global__ void sum_kernel(kf::Peers<const float> x, float* y, int64_t n, int world) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (int r = 0; r < world; ++r) s += x[r][i];
    y[i] = s;
  }
}

inline int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 1024 ? (b < 1 ? 1 : b) : 1024);
}

// y = the sum, enqueued on `s` with no waits.
inline void sum(kf::Comm& comm, kf::Tensors& t, cudaStream_t s) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  sum_kernel<<<blocks_for(y.numel), 256, 0, s>>>(kf::peers(comm, x.ptr<const float>()),
                                                 y.ptr<float>(), y.numel, comm.world);
}

// kWorkNs of busy device, then the sum, all on `s`.
inline void work_and_sum(kf::Comm& comm, kf::Tensors& t, cudaStream_t s) {
  busy_kernel<<<1, 32, 0, s>>>(kWorkNs);
  sum(comm, t, s);
}

// The whole correct call on comm.stream().
inline int correct_run(kf::Comm& comm, kf::Tensors& t) {
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(g_sig, 0, epoch, comm.stream());
  sum(comm, t, comm.stream());
  kf::launch_barrier(g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace fault

#define KF_FAULT_SETUP                                    \
  extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) { \
    return fault::setup(comm);                            \
  }
