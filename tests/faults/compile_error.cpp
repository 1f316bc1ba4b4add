// fault: all_reduce world=2 expect=compile_error
// Does not compile: the verdict carries the compiler's message, nothing runs.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return fault::correct_run(comm, t) + undeclared;
}
