// Fault (problem all_reduce, fp32): sums with float4 loads and forgets the n % 4 tail, so
// for odd n the last elements of y keep their poison at every world size (1, 2, 4 ...).
// Verdict: mismatch on y at the last indices (e.g. 4096..4098 for n = 4099).
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
  g_arrived = comm.signals(kf::kMaxWorld);
  return g_arrived ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const int64_t n = t["y"].numel;
  barrier(comm);
  sum_kernel<<<blocks_for(n / 4), 256, 0, comm.stream()>>>(
      kf::peers(comm, t["x"].ptr<const float>()), t["y"].ptr<float>(), n, comm.world);
  barrier(comm);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
