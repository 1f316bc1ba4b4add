// fault: all_reduce world=2,4 expect=unstable
// Reads its peers' x without waiting for them to enter the call: right whenever the
// harness puts a barrier before each call, wrong once calls are chained and a peer has
// not yet regenerated its x (the race pass, sandbox/rank/check.cpp).
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::sum_peers(comm, t);  // the missing entry barrier
  fault::barrier(comm);
  return 0;
}
