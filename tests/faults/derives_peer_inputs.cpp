// fault: all_reduce world=2 expect=mismatch
// Rebuilds its peers' inputs from the job file instead of reading them (derived.h):
// without --seed every rank's inputs come from a secret of its own, so the sum is wrong.
#include "derived.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return derived::run(comm, t);
}
