// fault: all_reduce world=2 expect=crash
// Rank 1 leaves the process with status 0 in the middle of its first call.
#include <unistd.h>

#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::barrier(comm);
  if (comm.rank == 1) _exit(0);
  fault::sum_peers(comm, t);
  fault::barrier(comm);
  return 0;
}
