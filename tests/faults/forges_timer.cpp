// fault: all_reduce world=1 expect=correct timed says=refuted_by_the_judges
// Forges its process's timer (issue 33's H100 case, on the host): every call does 2 ms
// of work and takes 1.9 ms off the runner's clock (forge.h rewires the runner's
// steady_clock::now), so each claim says a tenth of the time. The judges' audit, by their
// own clocks over batches of back-to-back calls, refutes the claims and the times of
// record are the audited ones.
#include <chrono>
#include <thread>

#include "common.h"
#include "forge.h"

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return fault::setup(comm) == 0 && forge::forge_steady_clock() ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  int rc = fault::correct_run(comm, t);
  forge::take_off(1.9);
  return rc;
}
