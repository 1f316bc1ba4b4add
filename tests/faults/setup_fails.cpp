// fault: all_reduce world=2 expect=setup_error
// kf_setup says it failed on rank 1 only.
#include "common.h"

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return fault::setup(comm) || comm.rank == 1;
}
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return fault::correct_run(comm, t);
}
