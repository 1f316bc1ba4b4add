// fault: all_reduce world=2 expect=crash
// Rank 0 dereferences null in kf_setup.
#include "common.h"

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  if (comm.rank == 0) *static_cast<volatile int*>(nullptr) = 1;
  return fault::setup(comm);
}
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return fault::correct_run(comm, t);
}
