// fault: all_reduce world=1 expect=correct timed says=refuted_by_the_judges
// Guesses which requests are audited (a batch: more than one call, read off the runner's
// stack) and forges only the others: the audit's own claims are honest and agree with
// the judges' clocks. The audited time is held against every claim, not only the
// audit's, so the forged isolated samples are refuted all the same.
#include <chrono>
#include <thread>

#include "common.h"
#include "forge.h"

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return fault::setup(comm) == 0 && forge::forge_steady_clock() ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const bool audited = forge::request_calls() > 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  int rc = fault::correct_run(comm, t);
  if (!audited) forge::take_off(1.9);
  return rc;
}
