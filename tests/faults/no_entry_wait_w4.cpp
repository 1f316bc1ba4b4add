// fault: all_reduce world=4 expect=unstable
// The missing entry wait of no_entry_wait.cpp at world 4.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::sum_peers(comm, t);
  fault::barrier(comm);
  return 0;
}
