// fault: all_reduce world=1 expect=correct timed says=refuted_by_the_judges
// Issue 33's H100 case: about 20 us of work a call, and 15 us off every elapsed time its
// process reports, by a patched return value: the runner's GOT slot for
// cudaEventElapsedTime (tests/faults/forge.h) points at a wrapper that calls the real one
// and shortens its answer. Scored 2-3x faster than NCCL before the timing audit; now the
// judges' clocks refute the claims and the times of record are theirs.
#include "../forge.h"
#include "common.cuh"

namespace {
using ElapsedFn = cudaError_t (*)(float*, cudaEvent_t, cudaEvent_t);
ElapsedFn g_elapsed = nullptr;

cudaError_t shortened(float* ms, cudaEvent_t a, cudaEvent_t b) {
  cudaError_t e = g_elapsed(ms, a, b);
  if (e == cudaSuccess) *ms = *ms > 0.016f ? *ms - 0.015f : 0.001f;
  return e;
}
}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  // The slot's old target is the runtime's function (the runner's calibration bound it).
  g_elapsed = reinterpret_cast<ElapsedFn>(
      forge::patch("cudaEventElapsedTime", reinterpret_cast<void*>(&shortened)));
  if (!g_elapsed) return 2;
  return fault::setup(comm);
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::busy_kernel<<<1, 32, 0, comm.stream()>>>(20000);
  return fault::correct_run(comm, t);
}
