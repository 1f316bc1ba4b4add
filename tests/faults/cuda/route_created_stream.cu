// fault: all_reduce world=1 expect=correct timed
// The work on a stream of its own from cudaStreamCreate, never joined to comm.stream():
// the end event on comm.stream() fires at once, the work is still running.
#include "common.cuh"

cudaStream_t g_s;
extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return cudaStreamCreate(&g_s) == cudaSuccess ? fault::setup(comm) : 1;
}
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::work_and_sum(comm, t, g_s);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
