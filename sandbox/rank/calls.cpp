// sandbox/rank/calls.cpp: see calls.h.
#include "calls.h"

#include <fmt/format.h>

#include <cstring>

#include "profile_range.h"
#include "status.h"
#include "steps.h"

namespace sandbox::rank {

namespace {

// The failure of a call that returned nonzero.
Outcome returned_nonzero(Results& out, const Lib& lib, bool setup, RankPhase phase,
                         const std::string& detail, int rc) {
  add_failure(out, setup ? Status::setup_error : Status::crash, lib.who, rank_phase_name(phase),
              fmt::format("{} returned {} ({}); it must return 0 on success",
                          setup ? "kf_setup" : "kf_run", rc, detail));
  return kFailed;
}

// The candidate, in its runner: one request, and what the judge makes of the reply.
Outcome invoke_remote(CallArgs& args, RunnerLink& runner, Results& out, const Lib& lib, bool setup,
                      RankPhase phase, const std::string& detail, Timed* timed, int calls) {
  const char* name = setup ? "kf_setup" : "kf_run";
  runner::Request q{};
  q.op = setup ? runner::Op::kSetup : runner::Op::kRun;
  q.calls = calls;
  q.timed = timed ? 1 : 0;
  q.bump_used = args.bump.used;
  q.profile = args.profile_call ? 1 : 0;
  q.stall_ms = setup ? 0 : args.stall_ms;
  RunnerCall rc = call_runner(runner, q);
  if (!rc.replied && rc.signal > 0) {
    // The crash file, as when the candidate ran in this process: "signal 11 (SIGSEGV) in
    // check trial 0 call 2".
    const char* abbrev = sigabbrev_np(rc.signal);
    write_crash_file(fmt::format("signal {} (SIG{}) in {}{}", rc.signal, abbrev ? abbrev : "?",
                                 status_where(), rc.note.empty() ? "" : ": " + rc.note));
    out.crashed = true;
    return kFatal;
  }
  if (!rc.replied) {
    add_failure(
        out, Status::crash, lib.who, rank_phase_name(phase),
        fmt::format("the candidate's process ended during {} ({}): {}", name, detail, rc.death));
    return kFatal;
  }
  const runner::Reply& r = rc.reply;
  if (setup) {
    args.bump.used = r.bump_used;
    args.bump.exhausted = r.exhausted != 0;
    args.bump.asked = r.asked;
  }
  if (!r.device_ok) {
    add_failure(out, Status::crash, lib.who, rank_phase_name(phase),
                fmt::format("CUDA error after {} ({}): {}", name, detail, r.text));
    return kFatal;
  }
  if (timed) {
    *timed = judge_time(runner, rc);
    timed->ms /= calls;
  }
  return r.rc != 0 ? returned_nonzero(out, lib, setup, phase, detail, r.rc) : kOk;
}

}  // namespace

Outcome invoke(const Device& dev, CallArgs& args, RunnerLink& runner, Results& out, const Lib& lib,
               bool setup, RankPhase phase, const std::string& detail, double limit_s, bool restart,
               Timed* timed, int calls) {
  if (setup || calls < 1) calls = 1;
  PartClock clock(lib.who == Role::candidate ? "candidate calls" : "baseline calls");
  if (lib.remote) {
    status_set(phase, detail, true, limit_s, restart);
    Outcome o = invoke_remote(args, runner, out, lib, setup, phase, detail, timed, calls);
    status_set(phase, detail, false, limit_s, false);
    return o;
  }
  EntryFn fn = setup ? lib.setup : lib.run;
  if (!fn) return kOk;
  const char* name = setup ? "kf_setup" : "kf_run";
  // Fresh copies before every call: a call that scribbles on its Tensor or Comm structs
  // cannot break the next one.
  auto fresh = [&] {
    args.items = args.pristine;
    args.tensors.items = args.items.data();
    args.comm_call = lib.who == Role::baseline ? args.comm_base : args.comm_cand;
  };
  std::string err;
  status_set(phase, detail, true, limit_s, restart);
  if (timed && !dev.be->timer_start(&err)) {
    status_set(phase, detail, false, limit_s, false);
    add_failure(out, Status::crash, lib.who, rank_phase_name(phase),
                "before " + std::string(name) + ": " + err);
    return kFatal;
  }
  int rc = 0;
  {
    ProfileRange range(args.profile_call);
    for (int i = 0; i < calls && rc == 0; ++i) {
      fresh();
      rc = fn(args.comm_call, args.tensors);
    }
  }
  bool ok = timed ? dev.be->timer_stop(timed, &err) : dev.be->synchronize(&err);
  if (ok && timed) timed->ms /= calls;
  status_set(phase, detail, false, limit_s, false);
  if (!ok) {
    add_failure(out, Status::crash, lib.who, rank_phase_name(phase),
                fmt::format("CUDA error after {} ({}): {}", name, detail, err));
    return kFatal;
  }
  return rc != 0 ? returned_nonzero(out, lib, setup, phase, detail, rc) : kOk;
}

}  // namespace sandbox::rank
