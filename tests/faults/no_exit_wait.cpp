// fault: all_reduce world=2,4 expect=unstable
// Returns as soon as its own sum is done, while a peer may still be reading its x: right
// whenever the peers read at the same pace, wrong once a fast rank's inputs change under
// a slow reader (the race pass's exit probe, sandbox/rank/check.cpp: the fast rank's x
// is poisoned the moment it returns, the others stall at their first read of a peer).
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::barrier(comm);  // every peer's x holds this call's inputs
  fault::sum_peers(comm, t);
  return 0;  // the missing exit barrier
}
