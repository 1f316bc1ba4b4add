// sandbox/rank/fatal_signals.h: one handler for the signals a crash raises, on a stack of
// its own (so that a stack overflow is told too), reset to the default action once it
// runs (so the handler can re-raise and the process die of the real cause). The judge's
// handler writes the crash file (status.cpp); the runner's tells its judge
// (runner/main.cpp).
#pragma once

#include <csignal>

namespace sandbox::rank {

inline void on_fatal_signals(void (*handler)(int)) {
  static char altstack[1 << 16];
  stack_t ss{};
  ss.ss_sp = altstack;
  ss.ss_size = sizeof altstack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(s, &sa, nullptr);
}

}  // namespace sandbox::rank
