// fault: all_reduce world=2 expect=rejected
// Calls system(): the static check refuses it before anything is built.
#include <cstdlib>

#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  std::system("touch /tmp/kforge-fault-system");
  return fault::correct_run(comm, t);
}
