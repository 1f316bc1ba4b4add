// sandbox/interrupt.h: SIGINT, SIGTERM and SIGHUP as a request, not a death. kforge's
// children (mpirun and its ranks, nvcc, agent commands) run in process groups of their
// own, so a Ctrl-C on the terminal or a SIGTERM to kforge never reaches them: kforge must
// end them itself. The handler only records the signal; run_process (process.h) sees it
// within one poll (~20 ms), kills its child's whole tree and says so, and the model call
// under way (llm/http.cpp) is aborted the same way. What to do next (return to the menu,
// write the summary, exit) is the caller's: it asks interrupted().
#pragma once

namespace sandbox {

// Installs the handlers (idempotent). Without them the signals keep their defaults.
void install_interrupt_handlers();

// The first signal that asked kforge to stop since the last clear_interrupt(); 0 when none.
int interrupt_signal();
inline bool interrupted() {
  return interrupt_signal() != 0;
}

// How many such signals have arrived since the last clear (a second Ctrl-C quits).
int interrupt_count();

// Forgets the pending request: the live view returns to its menu after the first Ctrl-C.
void clear_interrupt();

// Records a request as if signal sig had arrived (tests; a budget that must cut a call).
void request_interrupt(int sig);

// The exit status a process killed by sig would have had, as shells report it (128 + sig).
inline int interrupt_exit_code(int sig) {
  return 128 + sig;
}

}  // namespace sandbox
