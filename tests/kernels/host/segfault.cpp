// Fault (any problem): kf_run stores through a null pointer.
// Verdict: crash, naming the rank and SIGSEGV in the candidate's call phase.
#include <kf/kf.h>

extern "C" int kf_run(kf::Comm&, kf::Tensors&) {
  // volatile: the compiler cannot see the pointer is null, so it emits a real store
  // (a known-null store could be compiled into a trap, which raises SIGILL instead).
  int* volatile p = nullptr;
  *p = 42;
  return 0;
}
