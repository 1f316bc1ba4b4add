// fault: all_reduce world=1 expect=correct timed says=refuted_by_the_judges
// Takes 15 us off the elapsed times of the requests it guesses are not audited (one call,
// read off the runner's stack) and is honest in the audit's batches, whose own claims
// then agree with the judges' clocks. The audited time is held against every claim, so
// the forged samples are refuted all the same. About 20 us of work a call.
#include "../forge.h"
#include "common.cuh"

namespace {
using ElapsedFn = cudaError_t (*)(float*, cudaEvent_t, cudaEvent_t);
ElapsedFn g_elapsed = nullptr;
bool g_forge = false;  // set by the call in progress

cudaError_t shortened(float* ms, cudaEvent_t a, cudaEvent_t b) {
  cudaError_t e = g_elapsed(ms, a, b);
  if (e == cudaSuccess && g_forge) *ms = *ms > 0.016f ? *ms - 0.015f : 0.001f;
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
  g_forge = forge::request_calls() == 1;
  fault::busy_kernel<<<1, 32, 0, comm.stream()>>>(20000);
  return fault::correct_run(comm, t);
}
