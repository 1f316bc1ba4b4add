// fault: all_reduce world=1 expect=correct timed says=refuted_by_the_judges
// Forges by the runtime's function table: the CUDA runtime calls the driver through
// pointers it keeps in its own writable data; this case finds the driver's
// cuEventElapsedTime (and _v2) among them (/proc/self/maps: libcudart's writable
// mappings) and points them at a wrapper that takes 15 us off every answer. No symbol
// of the runner's is touched. About 20 us of work a call.
#include <cuda.h>

#include <cstdio>
#include <cstring>

#include "common.cuh"

namespace {
using DrvFn = CUresult (*)(float*, CUevent, CUevent);
DrvFn g_v1 = nullptr, g_v2 = nullptr;

CUresult shorten(CUresult r, float* ms) {
  if (r == CUDA_SUCCESS) *ms = *ms > 0.016f ? *ms - 0.015f : 0.001f;
  return r;
}
CUresult fake_v1(float* ms, CUevent a, CUevent b) {
  return shorten(g_v1(ms, a, b), ms);
}
CUresult fake_v2(float* ms, CUevent a, CUevent b) {
  return shorten(g_v2(ms, a, b), ms);
}

// Every pointer-sized word in libcudart's writable mappings equal to a driver entry is
// rewritten; how many were.
int patch_table() {
  // The driver's entry as of CUDA 11 (cuEventElapsedTime) and 13 (_v2), from the
  // runtime's own lookup (no dlsym, which the static check refuses).
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion("cuEventElapsedTime", &fn, 11000, cudaEnableDefault, &q) ==
      cudaSuccess)
    g_v1 = reinterpret_cast<DrvFn>(fn);
  if (cudaGetDriverEntryPointByVersion("cuEventElapsedTime", &fn, 13000, cudaEnableDefault, &q) ==
          cudaSuccess &&
      fn != reinterpret_cast<void*>(g_v1))
    g_v2 = reinterpret_cast<DrvFn>(fn);
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return 0;
  int n = 0;
  char line[512];
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3) continue;
    if (!std::strstr(line, "libcudart") || perms[0] != 'r' || perms[1] != 'w') continue;
    for (auto** p = reinterpret_cast<void**>(lo); p + 1 <= reinterpret_cast<void**>(hi); ++p) {
      if (g_v1 && *p == reinterpret_cast<void*>(g_v1)) *p = reinterpret_cast<void*>(&fake_v1), ++n;
      if (g_v2 && *p == reinterpret_cast<void*>(g_v2)) *p = reinterpret_cast<void*>(&fake_v2), ++n;
    }
  }
  std::fclose(maps);
  return n;
}
}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  if (patch_table() == 0) return 2;  // the route is not there: setup_error, told by the bench
  return fault::setup(comm);
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::busy_kernel<<<1, 32, 0, comm.stream()>>>(20000);
  return fault::correct_run(comm, t);
}
