// fault: all_reduce world=2 expect=unstable
// Reads its peers' x without the entry barrier: right whenever the harness puts a
// barrier before each call, wrong once calls are chained and a peer is late.
#include "common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const uint32_t epoch = kf::next_epoch();
  fault::sum(comm, t, comm.stream());
  kf::launch_barrier(fault::g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
