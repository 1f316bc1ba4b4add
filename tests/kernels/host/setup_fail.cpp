// Fault (any problem): kf_setup returns 3 on every rank.
// Verdict: setup_error, naming the candidate's kf_setup and the return value 3.
#include <kf/kf.h>

extern "C" int kf_setup(kf::Comm&, kf::Tensors&) {
  return 3;
}

extern "C" int kf_run(kf::Comm&, kf::Tensors&) {
  return 0;
}
