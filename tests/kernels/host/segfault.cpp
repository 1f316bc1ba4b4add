// Fault (any problem): kf_run stores through a null pointer.
// Verdict: crash, naming the rank and SIGSEGV in the candidate's call phase.
#include <kf/kf.h>

extern "C" int kf_run(kf::Comm&, kf::Tensors&) {
  // Both volatiles matter: the pointer's, so the compiler cannot see it is null (a
  // known-null store may become a trap, SIGILL), and the target's, so the store is not
  // dropped (g++ -O2 deletes a plain store through it).
  volatile int* volatile p = nullptr;
  *p = 42;
  return 0;
}
