// Fault (any problem): kf_run launches a kernel that waits for a signal word nobody ever
// sets, so the stream never drains. Verdict: timeout, every rank stuck in the call phase.
#include <cstdint>
#include <kf/kf.cuh>

namespace {

uint32_t* g_flag = nullptr;

__global__ void wait_kernel(const uint32_t* flag) {
  uint32_t v = 0;
  do {
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
    if (v == 0) __nanosleep(1000);
  } while (v == 0);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_flag = comm.signals(1);
  return g_flag ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors&) {
  wait_kernel<<<1, 1, 0, comm.stream()>>>(g_flag);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
