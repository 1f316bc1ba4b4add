// fault: all_reduce world=1 expect=correct timed says=were_raised_to_it
// Forges one claim in three (2 ms of work claimed as 0.1 ms): too few to move the median,
// enough to fake the best times (p10, min). The forged samples lie below the judges'
// audited time by more than the bound and are raised to it, and the verdict says so.
#include <chrono>
#include <thread>

#include "common.h"
#include "forge.h"

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  return fault::setup(comm) == 0 && forge::forge_steady_clock() ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  static int calls = 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  int rc = fault::correct_run(comm, t);
  if (++calls % 3 == 0) forge::take_off(1.9);
  return rc;
}
