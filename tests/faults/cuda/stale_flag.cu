// fault: all_reduce world=2 expect=unstable
// Its entry flags hold 1 for ever after the first call instead of a fresh epoch: from
// the second call on the wait passes at once, whether the peer is there or not.
#include "common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(fault::g_sig, 0, 1, comm.stream());
  fault::sum(comm, t, comm.stream());
  kf::launch_barrier(fault::g_sig, 1, epoch, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
