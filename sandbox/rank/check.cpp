// sandbox/rank/check.cpp: see check.h.
#include "check.h"

#include <fmt/format.h>
#include <mpi.h>

#include <chrono>
#include <thread>

#include "calls.h"
#include "data.h"
#include "status.h"

namespace sandbox::rank {

namespace {
Role g_last_who = Role::candidate;  // who ran last: a sticky device error is theirs

Outcome run_lib(Ctx& c, Lib& lib, RankPhase phase, const std::string& detail, double limit_s,
                bool restart) {
  g_last_who = lib.who;
  return invoke(c.dev, c.args, c.libs.runner, c.out, lib, false, phase, detail, limit_s, restart);
}

// At small sizes the baseline is held against the oracle too: a wrong baseline would
// make a later full-size comparison against it meaningless.
Outcome check_baseline(Ctx& c, uint64_t seed, const Values& want, int trial, int call,
                       const std::string& detail) {
  std::string err;
  // Synchronized before the barrier: a peer may read our inputs as soon as it passes.
  if (!prepare(c.at, c.dev, c.args, seed, &err) || !c.dev.be->synchronize(&err))
    return device_error(c.out, RankPhase::check, "preparing the baseline's inputs", err);
  MPI_Barrier(MPI_COMM_WORLD);
  Outcome o = run_lib(c, c.libs.base, RankPhase::check, detail + ": baseline",
                      c.at.job.settings.limits.call_s, true);
  if (o != kOk) {
    c.out.report.failures.back().trial = trial;
    c.out.report.failures.back().call = call;
    return o;
  }
  Values got;
  if (!read_outputs(c.at, c.dev, c.args, &got, &err))
    return device_error(c.out, RankPhase::check, "reading the baseline's outputs", err);
  Failure f;
  if (!compare_outputs(c.at, got, want, &f)) {
    Failure& r = add_failure(c.out, Status::mismatch, Role::baseline, "check", "");
    std::string msg = f.message;
    r = f;
    r.who = Role::baseline;
    r.phase = "check";
    r.trial = trial;
    r.call = call;
    r.message = "the baseline disagrees with the oracle: " + msg;
    return kFailed;
  }
  return kOk;
}
}  // namespace

Outcome device_error(Results& out, RankPhase phase, const std::string& what,
                     const std::string& err) {
  add_failure(out, Status::crash, g_last_who, rank_phase_name(phase),
              fmt::format("CUDA error while {}: {}", what, err));
  return kFatal;
}

Outcome expected_after(Ctx& c, uint64_t seed, RankPhase phase, const std::string& detail,
                       Values* want) {
  std::string err;
  if (c.libs.use_oracle) {
    AllInputs all;
    if (gather_inputs(c.at, seed, &all, &err) &&
        oracle_expected(c.at, c.libs.oracle, all, want, &err))
      return kOk;
    c.out.report.sandbox_errors.push_back(err);
    return kInternal;
  }
  if (!prepare(c.at, c.dev, c.args, seed, &err) || !c.dev.be->synchronize(&err))
    return device_error(c.out, phase, "preparing the baseline's inputs", err);
  MPI_Barrier(MPI_COMM_WORLD);
  Outcome o = run_lib(c, c.libs.base, phase, detail + ": baseline (reference)",
                      c.at.job.settings.limits.call_s, true);
  if (o != kOk) return o;
  if (!read_outputs(c.at, c.dev, c.args, want, &err))
    return device_error(c.out, phase, "reading the baseline's outputs", err);
  return kOk;
}

namespace {
// How long `rank` waits before chained call `call`: 0 to 2 * stagger_ms, drawn from the
// job's seed, so that a failure comes back with the same seed.
double chain_delay_ms(const Job& job, int rank, int call) {
  uint64_t h = inputs::call_seed(job.seed(), 3, rank, call);
  return static_cast<double>(h % 1001) / 1000.0 * 2.0 * job.settings.stagger_ms;
}

// The exit probe on odd chained calls: one rank (in turn) runs at full pace, the others
// stall stagger_ms at their first read of a peer's input (runner/peer_stall.h, host),
// and every rank's inputs are poisoned the moment its call returns. A kernel that lets a
// rank return while a peer may still read its inputs then hands the slow ranks poison.
bool exit_probe_call(const Place& at, int call) {
  return call % 2 == 1 && at.world >= 2;
}
bool exit_probe_fast(const Place& at, int call) {
  return at.rank == (call / 2) % at.world;
}
double exit_probe_stall_ms(const Place& at, int call) {
  return exit_probe_call(at, call) && !exit_probe_fast(at, call) ? at.job.settings.stagger_ms : 0;
}

// How long this rank waits before chained call `call`. On the exit probe's calls the fast
// rank enters a quarter of stagger_ms after the slow ones, so that they are already
// inside the call (on the GPU: their SMs held from its return) when it arrives; the
// other calls are late by chain_delay_ms.
double chained_delay_ms(const Place& at, int call) {
  if (!exit_probe_call(at, call)) return chain_delay_ms(at.job, at.rank, call);
  return exit_probe_fast(at, call) ? at.job.settings.stagger_ms / 4 : 0;
}

// The race pass: `race_calls` calls with nothing of the harness's between them: no
// barrier; each rank, once its last call returned, poisons its inputs, waits a random
// delay, regenerates them and enters the next call (odd calls: the exit probe above). The trials'
// barrier before each call hides a missing entry or exit wait; here the kernel's own waits are all
// there is, as in a training step or batched timing. Every rank runs every call, whatever it finds
// (a rank that stopped early would leave its peers waiting for it in the next call).
Outcome run_chained(Ctx& c) {
  const Limits& lim = c.at.job.settings.limits;
  std::vector<uint64_t> seeds(c.at.job.settings.race_calls);
  std::vector<Values> got(c.at.job.settings.race_calls);
  for (int k = 0; k < c.at.job.settings.race_calls; ++k)
    seeds[k] = inputs::call_seed(c.secret, 2, 0, k);
  MPI_Barrier(MPI_COMM_WORLD);
  Outcome o = kOk;
  for (int k = 0; k < c.at.job.settings.race_calls && o != kFatal; ++k) {
    const std::string detail = fmt::format("chained call {}", k);
    status_set(RankPhase::check, detail + ": preparing", false, lim.call_s);
    // Late before regenerating its inputs too: a peer that reads them without waiting
    // for this rank to enter reads the last call's.
    std::this_thread::sleep_for(
        std::chrono::duration<double, std::milli>(chained_delay_ms(c.at, k)));
    std::string err;
    if (!prepare(c.at, c.dev, c.args, seeds[k], &err) || !c.dev.be->synchronize(&err))
      return device_error(c.out, RankPhase::check, "preparing the inputs", err);
    c.args.stall_ms = exit_probe_stall_ms(c.at, k);
    Outcome r = run_lib(c, c.libs.cand, RankPhase::check, detail, lim.call_s, true);
    c.args.stall_ms = 0;
    if (r == kFatal) return r;
    // This rank's call returned: a peer still reading its inputs reads poison from now.
    if (!poison_inputs(c.at, c.dev, c.args, &err) || !c.dev.be->synchronize(&err))
      return device_error(c.out, RankPhase::check, "poisoning the inputs", err);
    if (r != kOk || o != kOk) {
      o = o == kOk ? r : o;
      continue;
    }
    if (!read_outputs(c.at, c.dev, c.args, &got[k], &err))
      return device_error(c.out, RankPhase::check, "reading the outputs", err);
  }
  if ((o = agree(o)) != kOk) return o;
  // Only now, with every chained call over, the expected outputs of each.
  status_set(RankPhase::check, "chained calls: comparing", false, lim.reference_s);
  for (int k = 0; k < c.at.job.settings.race_calls && o == kOk; ++k) {
    AllInputs all;
    Values want;
    std::string err;
    if (!gather_inputs(c.at, seeds[k], &all, &err) ||
        !oracle_expected(c.at, c.libs.oracle, all, &want, &err)) {
      c.out.report.sandbox_errors.push_back(err);
      return agree(kInternal);
    }
    Failure f;
    if (!compare_outputs(c.at, got[k], want, &f)) {
      f.kind = Status::unstable;
      f.who = Role::candidate;
      f.phase = "chained";  // the verdict's hint names the missing waits (verdict.cpp)
      f.call = k;
      c.out.report.failures.push_back(f);
      o = kFailed;
    }
    o = agree(o);
  }
  return o;  // agreed: after the chained calls, then after each comparison
}

// `trials` rounds of `calls` calls, each behind a barrier; stops at the first failing
// call (on every rank).
Outcome run_barriered_checks(Ctx& c) {
  const Limits& lim = c.at.job.settings.limits;
  for (int trial = 0; trial < c.at.job.settings.trials; ++trial) {
    bool call0_ok = false;
    for (int call = 0; call < c.at.job.settings.calls; ++call) {
      uint64_t seed = inputs::call_seed(c.secret, 0, trial, call);
      std::string detail = fmt::format("trial {} call {}", trial, call);
      status_set(RankPhase::check, detail + ": preparing", false, lim.call_s);
      std::string err;
      if (!prepare(c.at, c.dev, c.args, seed, &err))
        return device_error(c.out, RankPhase::check, "preparing the inputs", err);
      if (!c.dev.be->synchronize(&err))
        return device_error(c.out, RankPhase::check, "preparing the inputs", err);
      MPI_Barrier(MPI_COMM_WORLD);
      // Odd calls start staggered: a candidate that reads a peer's buffers without
      // waiting for that peer reads poison or stale data.
      if (call % 2 == 1 && c.at.job.settings.stagger_ms > 0 && c.at.rank > 0)
        std::this_thread::sleep_for(
            std::chrono::duration<double, std::milli>(c.at.rank * c.at.job.settings.stagger_ms));
      Outcome o = run_lib(c, c.libs.cand, RankPhase::check, detail, lim.call_s, true);
      if (o == kFatal) return o;
      if (o == kFailed) {
        c.out.report.failures.back().trial = trial;
        c.out.report.failures.back().call = call;
      }
      if ((o = agree(o)) != kOk) return o;

      // What the call left (outputs, and inputs that must be unchanged), then what it
      // should have left, worked out only now.
      status_set(RankPhase::check, detail + ": comparing", false, lim.reference_s);
      Values got, want;
      Failure changed;
      bool same = true;
      if (!read_outputs(c.at, c.dev, c.args, &got, &err))
        return device_error(c.out, RankPhase::check, "reading the outputs", err);
      if (!inputs_unchanged(c.at, c.dev, c.args, seed, &changed, &same, &err))
        return device_error(c.out, RankPhase::check, "reading the inputs back", err);
      o = expected_after(c, seed, RankPhase::check, detail, &want);
      if (o == kOk && c.libs.use_oracle && c.libs.base_runs)
        o = check_baseline(c, seed, want, trial, call, detail);
      if (o == kFatal || (o = agree(o)) != kOk) return o;
      Failure f;
      if (!compare_outputs(c.at, got, want, &f)) {
        if (call > 0 && call0_ok) {
          f.kind = Status::unstable;
          f.message = fmt::format(
              "call 0 was correct, call {} differs: a flag or counter not reset between "
              "calls? ({})",
              call, f.message);
        }
        same = false;
      } else if (!same) {
        f = changed;
      }
      if (!same) {
        f.who = Role::candidate;
        f.phase = "check";
        f.trial = trial;
        f.call = call;
        c.out.report.failures.push_back(f);
        o = kFailed;
      }
      if ((o = agree(o)) != kOk) return o;
      if (call == 0) call0_ok = true;
    }
  }
  return kOk;
}

}  // namespace

Outcome run_checks(Ctx& c) {
  Outcome o = run_barriered_checks(c);
  if (o == kOk && c.libs.use_oracle && c.at.world > 1 && c.at.job.race &&
      c.at.job.settings.race_calls > 0)
    o = run_chained(c);
  return o;
}

}  // namespace sandbox::rank
