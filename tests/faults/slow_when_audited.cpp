// fault: all_reduce world=1 expect=correct timed says=refuted_by_the_judges
// Fast on the requests it takes for isolated samples, 6 ms slower a call on the ones it
// takes for audits (batches, read off the runner's stack), with an honest clock: its
// isolated claims cannot be confirmed by the judges' clocks, so they are not the time
// of record; the audited time is, and the verdict says the claims were refuted.
#include <chrono>
#include <thread>

#include "common.h"
#include "forge.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  if (forge::request_calls() > 1) std::this_thread::sleep_for(std::chrono::milliseconds(6));
  return fault::correct_run(comm, t);
}
