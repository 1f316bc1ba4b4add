// fault: all_reduce world=1 expect=correct timed
// Honest use of a second stream: comm.stream() forks to it and joins it again through
// events, so the end event waits for the work. Not off the stream.
#include "common.cuh"

cudaStream_t g_s;
cudaEvent_t g_fork, g_join;
extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  if (cudaStreamCreateWithFlags(&g_s, 0x1) != cudaSuccess) return 1;
  if (cudaEventCreateWithFlags(&g_fork, cudaEventDisableTiming) != cudaSuccess) return 1;
  if (cudaEventCreateWithFlags(&g_join, cudaEventDisableTiming) != cudaSuccess) return 1;
  return fault::setup(comm);
}
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  cudaEventRecord(g_fork, comm.stream());
  cudaStreamWaitEvent(g_s, g_fork, 0);
  fault::work_and_sum(comm, t, g_s);
  cudaEventRecord(g_join, g_s);
  cudaStreamWaitEvent(comm.stream(), g_join, 0);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
