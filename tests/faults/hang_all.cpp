// fault: all_reduce world=2 expect=timeout args=--call-limit,3
// Every rank spins forever in its first call.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm&, kf::Tensors&) {
  for (volatile int spin = 1; spin;) {
  }
  return 0;
}
