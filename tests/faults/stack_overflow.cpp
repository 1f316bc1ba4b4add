// fault: all_reduce world=2 expect=crash
// Recurses without end on rank 1: the crash handler runs on its own stack and reports it.
#include "common.h"

namespace {
int deeper(volatile int n) {
  volatile char pad[4096];
  pad[0] = static_cast<char>(n);
  return deeper(n + 1) + pad[0];
}
}  // namespace

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::barrier(comm);
  if (comm.rank == 1) return deeper(0);
  fault::sum_peers(comm, t);
  fault::barrier(comm);
  return 0;
}
