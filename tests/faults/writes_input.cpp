// fault: all_reduce world=1,2 expect=mismatch
// The right sum, but its x is used as scratch afterwards: inputs must stay unchanged.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::correct_run(comm, t);
  t["x"].ptr<float>()[0] = 12345.0f;
  return 0;
}
