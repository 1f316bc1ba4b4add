// fault: all_reduce world=2 expect=timeout args=--call-limit,3
// Rank 1 never returns from its first call; rank 0 waits for it at the exit barrier.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::barrier(comm);
  fault::sum_peers(comm, t);
  while (comm.rank == 1) sched_yield();
  fault::barrier(comm);
  return 0;
}
