// fault: all_reduce world=2 expect=correct
// Overwrites the Comm and Tensor structs it is handed after using them: the harness
// gives every call fresh copies, so the next call is unaffected.
#include <cstring>

#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::correct_run(comm, t);
  kf::Tensor& y = t["y"];
  y.numel = 0;
  y.data = nullptr;
  comm.world = 99;
  return 0;
}
