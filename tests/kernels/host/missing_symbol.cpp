// Fault (any problem): defines kf_setup but not kf_run.
// Verdict: load_error, naming the missing symbol kf_run.
#include <kf/kf.h>

extern "C" int kf_setup(kf::Comm&, kf::Tensors&) {
  return 0;
}
