// fault: all_reduce world=2 expect=unstable
// Waits for its peers on entry but not on exit: a rank returns while a peer may still be
// reading its x. The race pass poisons a rank's inputs the moment its call returns
// (sandbox/rank/check.cpp's exit probe), so a slower peer reads poison.
#include "common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const uint32_t epoch = kf::next_epoch();
  kf::launch_barrier(fault::g_sig, 0, epoch, comm.stream());
  fault::sum(comm, t, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;  // the missing exit barrier
}
