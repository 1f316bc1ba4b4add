// fault: all_reduce world=2 expect=crash
// A correct call that reports failure: kf_run must return 0.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::correct_run(comm, t);
  return 7;
}
