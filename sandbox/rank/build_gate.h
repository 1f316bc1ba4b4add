// sandbox/rank/build_gate.h: the ranks start while kforge still compiles the candidate.
// mpirun's start, MPI, the heap and NCCL (about a second) overlap the build; then each rank
// waits for the job's build gate (job.h: Job::build_gate), a file kforge writes once the
// libraries are in place: {"ok": true} to go on, {"ok": false} when the build failed and
// the job ends without a report.
#pragma once

#include "job.h"

namespace sandbox::rank {

// Waits (status phase "build", limit Limits::build_s: the watchdog ends a wait that
// overruns it) for the gate; true when it says go. A job without a gate goes at once.
bool wait_for_build(const Job& job);

}  // namespace sandbox::rank
