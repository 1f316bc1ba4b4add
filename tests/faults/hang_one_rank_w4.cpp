// fault: all_reduce world=4 expect=timeout args=--call-limit,3
// Rank 3 never enters its first call's exit barrier; ranks 0-2 wait for it there.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::barrier(comm);
  fault::sum_peers(comm, t);
  while (comm.rank == 3) sched_yield();
  fault::barrier(comm);
  return 0;
}
