// fault: all_reduce world=1 expect=correct timed says=refuted_by_the_judges
// About 20 us a call on the requests it takes for isolated samples, 200 us more on the
// ones it takes for audits (batches, read off the runner's stack), with an honest timer.
// Its isolated claims cannot be confirmed by the judges' clocks: they are refuted and the
// audited time is the time of record.
#include "../forge.h"
#include "common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const bool audited = forge::request_calls() > 1;
  fault::busy_kernel<<<1, 32, 0, comm.stream()>>>(audited ? 220000 : 20000);
  return fault::correct_run(comm, t);
}
