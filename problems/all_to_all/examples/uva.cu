// A simple correct UVA candidate for all_to_all: a barrier kernel (every rank's x is
// ready), one kernel that copies chunk `rank` of every peer s's x into chunk s of y, and a
// second barrier (no peer's x is regenerated while another rank still reads it).
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

// One block of kf::kMaxWorld threads. Thread r writes `epoch` into slot `rank` of rank r's
// arrival array, then waits until rank r has written at least `epoch` into ours. The
// epoch only grows from call to call, so the words never need a reset; `>=` because a
// fast peer may already be at the next barrier.
__global__ void barrier_kernel(kf::Peers<uint32_t> arrived, int rank, int world, uint32_t epoch) {
  const int r = static_cast<int>(threadIdx.x);
  if (r < world) {
    __threadfence_system();  // this rank's earlier writes are visible before the flag
    st_release(arrived[r] + rank, epoch);
    while (ld_acquire(arrived[rank] + r) < epoch) __nanosleep(64);
  }
  __syncthreads();
}

uint32_t* g_arrived = nullptr;  // kf::kMaxWorld words per rank
uint32_t g_epoch = 0;           // barriers launched by this rank; never reset

void barrier(const kf::Comm& comm) {
  barrier_kernel<<<1, kf::kMaxWorld, 0, comm.stream()>>>(kf::peers(comm, g_arrived), comm.rank,
                                                         comm.world, ++g_epoch);
}

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 1024 ? (b < 1 ? 1 : b) : 1024);
}

// y[s * n + i] = x of rank s, [rank * n + i]: one grid-stride pass over all of y.
__global__ void exchange_kernel(kf::Peers<const float> x, float* y, int64_t n, int rank,
                                int world) {
  const int64_t total = n * world;
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < total;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x)
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
  const int64_t n = x.numel / comm.world;
  barrier(comm);
  exchange_kernel<<<blocks_for(y.numel), 256, 0, comm.stream()>>>(
      kf::peers(comm, x.ptr<const float>()), y.ptr<float>(), n, comm.rank, comm.world);
  barrier(comm);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
