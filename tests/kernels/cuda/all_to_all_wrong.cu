// Fault (problem all_to_all): exchanges the right chunks but copies only n - 1 elements of
// each, so the last element of every chunk of y keeps its poison, at every world size.
// Verdict: mismatch on y at indices n - 1, 2n - 1, ...
#include <cstdint>

#include <kf/kf.cuh>

namespace {

__device__ __forceinline__ uint32_t ld_acquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void st_release(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// A correct epoch barrier: the faults below are elsewhere.
__global__ void barrier_kernel(kf::Peers<uint32_t> arrived, int rank, int world, uint32_t epoch) {
  const int r = static_cast<int>(threadIdx.x);
  if (r < world) {
    __threadfence_system();
    st_release(arrived[r] + rank, epoch);
    while (ld_acquire(arrived[rank] + r) < epoch) __nanosleep(64);
  }
  __syncthreads();
}

uint32_t* g_arrived = nullptr;
uint32_t g_epoch = 0;

void barrier(const kf::Comm& comm) {
  barrier_kernel<<<1, kf::kMaxWorld, 0, comm.stream()>>>(kf::peers(comm, g_arrived), comm.rank,
                                                         comm.world, ++g_epoch);
}

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 1024 ? (b < 1 ? 1 : b) : 1024);
}

__global__ void exchange_kernel(kf::Peers<const float> x, float* y, int64_t n, int rank,
                                int world) {
  const int64_t total = n * world;
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < total;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x)
    if (j % n < n - 1)  // the bug: the chunk's last element is skipped
      y[j] = x[static_cast<int>(j / n)][rank * n + j % n];
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_arrived = comm.signals(kf::kMaxWorld);
  return g_arrived ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  barrier(comm);
  exchange_kernel<<<blocks_for(y.numel), 256, 0, comm.stream()>>>(
      kf::peers(comm, x.ptr<const float>()), y.ptr<float>(), x.numel / comm.world, comm.rank,
      comm.world);
  barrier(comm);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
