// fault: all_reduce world=2 expect=timeout args=--call-limit,3
// Ignores SIGTERM and SIGINT, then hangs: only SIGKILL ends it, and nothing may be left.
#include <csignal>

#include "common.h"

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  std::signal(SIGTERM, SIG_IGN);
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGHUP, SIG_IGN);
  return fault::setup(comm);
}
extern "C" int kf_run(kf::Comm&, kf::Tensors&) {
  for (;;) sched_yield();
}
