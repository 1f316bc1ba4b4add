// sandbox/rank/calls.h: one call into a candidate or baseline library, with the status
// file saying so while it runs.
#pragma once

#include <string>

#include "context.h"
#include "rank_status.h"

namespace sandbox::rank {

// Calls lib.setup (setup = true, skipped when absent) or lib.run on fresh copies of the
// tensors and of lib's Comm (from `args`), then synchronizes; a remote lib (the candidate)
// is called in its process, through `runner`. Marks the status in_candidate from just
// before the call until the synchronize returns. A nonzero return is a failure
// (setup_error for kf_setup, crash for kf_run) in `out`; a device error after it is a
// crash and kFatal. With `timed`, the call is timed (Backend::timer_stop: all the work it
// caused, on any stream). `calls` > 1 makes that many calls back to back (kf_run only),
// stopping at a nonzero return; timed->ms is then their time over `calls`.
Outcome invoke(const Device& dev, CallArgs& args, RunnerLink& runner, Results& out, const Lib& lib,
               bool setup, RankPhase phase, const std::string& detail, double limit_s, bool restart,
               Timed* timed = nullptr, int calls = 1);

}  // namespace sandbox::rank
