// sandbox/verdict_from_run.cpp: what one finished job says, as a Verdict. The stories are
// tried from the clearest to the vaguest: the job's memory limit, a rank that died by a
// signal, the watchdog, the failures the ranks reported, a rank that ended without a
// report; and only when none applies, correct with its figures.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <optional>

#include "evaluate.h"
#include "process.h"

namespace sandbox {

namespace {

// The last `lines` lines of text.
std::string tail_lines(const std::string& text, size_t lines) {
  size_t pos = text.size();
  size_t n = 0;
  while (pos > 0) {
    size_t p = text.rfind('\n', pos - 1);
    if (p == std::string::npos) return text;
    if (p + 1 < text.size() && ++n > lines) return text.substr(p + 1);
    pos = p;
  }
  return text;
}

void add_unique(std::vector<std::string>* notes, const std::string& n) {
  if (std::find(notes->begin(), notes->end(), n) == notes->end()) notes->push_back(n);
}

void add_note(Verdict* v, const std::string& n) {
  add_unique(&v->notes, n);
}

// Every crashed rank had its report written (it was reporting or done) and some report
// holds a failure of the candidate's.
bool crashed_after_failing(const RunResult& run, const std::vector<Failure>& failures) {
  bool candidate_failed = false;
  for (const Failure& f : failures) candidate_failed = candidate_failed || f.who != Role::baseline;
  if (!candidate_failed) return false;
  for (const auto& [r, what] : run.crashes) {
    bool reported = r < static_cast<int>(run.reports.size()) && run.reports[r];
    bool late =
        r < static_cast<int>(run.statuses.size()) &&
        (run.statuses[r].phase == RankPhase::report || run.statuses[r].phase == RankPhase::done);
    if (!reported || !late) return false;
  }
  return true;
}

double gbps(double bytes, double ms, double factor) {
  return ms > 0 ? bytes / (ms * 1e-3) * factor / 1e9 : 0;
}

// The job's own words: notes, how it was confined, and everything the ranks reported.
// Sandbox errors the ranks reported go to *sandbox_errors, not to the verdict.
void take_reports(const Job& job, const RunResult& run, Verdict* v,
                  std::vector<std::string>* sandbox_errors) {
  for (auto& n : run.notes) add_note(v, n);
  if (job.fixed_inputs())
    add_note(v, fmt::format("inputs: from --seed {}, reproducible, and so derivable by a kernel "
                            "(without --seed each rank's inputs come from a secret of its own)",
                            job.seed()));
  // Said on every size: whoever reads any verdict of this eval learns the check was weaker.
  if (!job.settings.race_pass && job.settings.world > 1 && !job.settings.under_tool)
    add_note(v,
             "race pass: skipped (--no-race-pass); a kernel that does not wait for its peers "
             "may pass (drop --no-race-pass for the full check)");
  if (!run.isolation.empty()) v->harness_notes.push_back("sandbox: " + run.isolation);
  for (auto& rep : run.reports) {
    if (!rep) continue;
    v->emulated = v->emulated || rep->emulated;
    for (auto& n : rep->isolation) add_unique(&v->harness_notes, n);
    for (auto& n : rep->notes) add_note(v, n);
    for (auto& e : rep->sandbox_errors)
      sandbox_errors->push_back(fmt::format("rank {}: sandbox error: {}", rep->rank, e));
    for (auto& f : rep->failures) {
      v->failures.push_back(f);
      v->failure_ranks.push_back(rep->rank);
    }
  }
  if (run.result) {
    v->emulated = v->emulated || run.result->emulated;
    for (auto& n : run.result->notes) add_note(v, n);
  }
}

// 0-2: the job ended early: its memory limit, a rank's death by a signal, the watchdog
// or mpirun's own hard limit. True when one of them is the verdict.
bool ended_early(const RunResult& run, const std::string& mpirun_tail, Verdict* v) {
  if (run.oom_killed) {  // what the other ranks did next follows from it
    v->status = Status::crash;
    v->log = fmt::format(
        "out of memory: the job went past its limit of {} MiB of host memory (all "
        "ranks together) and the kernel ended it; allocate less (KFORGE_MEMORY_MIB "
        "raises the limit)",
        run.memory_bytes >> 20);
    return true;
  }
  // A crash file is the clearest story, even when the watchdog then found the peers
  // waiting. Unless every crashed rank had already reported the candidate's failures:
  // then a thread it left running hit the process as it shut down, and they come first.
  if (!run.crashes.empty() && !crashed_after_failing(run, v->failures)) {
    v->status = Status::crash;
    for (auto& [r, what] : run.crashes) v->crashes.push_back({r, what});
    v->log = mpirun_tail;
    return true;
  }
  for (auto& [r, what] : run.crashes)
    add_note(v, fmt::format("rank {} then died by {} after its report (work left running "
                            "after kf_run returned?)",
                            r, what));
  if (run.lingering) {
    add_note(v, run.kill_reason);
    return false;
  }
  const bool watchdog = run.killed_by_watchdog || (run.signal != 0 && !run.stuck.empty());
  if (!watchdog && run.kill_reason.empty()) return false;
  v->status = Status::timeout;
  v->limit_s = run.limit_s;
  for (auto& s : run.stuck)
    v->stuck.push_back({s.rank, rank_phase_name(s.phase), s.detail, s.seconds, s.in_candidate});
  for (auto& s : run.statuses) {
    bool is_stuck =
        std::any_of(run.stuck.begin(), run.stuck.end(), [&](auto& x) { return x.rank == s.rank; });
    if (!is_stuck && s.present)
      v->others.push_back({s.rank, rank_phase_name(s.phase), s.detail, s.seconds, s.in_candidate});
  }
  v->log = run.kill_reason + (mpirun_tail.empty() ? "" : "\n" + mpirun_tail);
  return true;
}

// 3: the candidate's reported failures decide, the worst first, in rank order. True when
// there were some.
bool candidate_failed(const std::string& mpirun_tail, Verdict* v) {
  std::optional<Status> worst;
  for (auto& f : v->failures)
    if (f.who != Role::baseline && (!worst || more_severe(f.kind, *worst))) worst = f.kind;
  if (!worst) return false;
  v->status = *worst;
  std::vector<std::pair<int, Failure>> ordered;
  for (size_t i = 0; i < v->failures.size(); ++i)
    ordered.push_back({v->failure_ranks[i], v->failures[i]});
  std::stable_sort(ordered.begin(), ordered.end(), [](auto& a, auto& b) {
    return (a.second.who == Role::baseline) < (b.second.who == Role::baseline);
  });
  v->failures.clear();
  v->failure_ranks.clear();
  for (auto& [r, f] : ordered) {
    v->failures.push_back(f);
    v->failure_ranks.push_back(r);
  }
  if (v->status == Status::crash) v->log = mpirun_tail;
  return true;
}

// 4: a rank that ended without a report, told from the record of how its process ended
// (rank/reaper.h), the first to end first (mpirun ends the others after it). True when
// there was one.
bool unreported_ranks(const RunResult& run, const std::string& mpirun_tail, Verdict* v) {
  std::vector<std::pair<long long, size_t>> order;  // (when it ended, rank)
  for (size_t r = 0; r < run.reports.size(); ++r) {
    const bool known = r < run.exits.size() && run.exits[r] && run.exits[r]->ended_ms > 0;
    order.push_back({known ? run.exits[r]->ended_ms : LLONG_MAX, r});
  }
  std::stable_sort(order.begin(), order.end());
  for (auto [ended, r] : order) {
    if (run.reports[r]) continue;
    v->status = Status::crash;
    const std::optional<RankExit> e = r < run.exits.size() ? run.exits[r] : std::nullopt;
    std::string what;
    if (e && e->signal)
      what = fmt::format("signal {} ({}) without a report", e->signal, signal_name(e->signal));
    else if (e)
      what = fmt::format("exit code {} without a report", e->exit_code);
    else
      what = fmt::format(
          "an end without a report or a record of how its process ended (killed with the "
          "process that started it; mpirun exited with {})",
          run.signal ? "signal " + signal_name(run.signal)
                     : "code " + std::to_string(run.exit_code));
    RankStatus s = r < run.statuses.size() ? run.statuses[r] : RankStatus{};
    if (s.present)
      what += " (last in " + std::string(rank_phase_name(s.phase)) +
              (s.detail.empty() ? "" : " " + s.detail) + ")";
    v->crashes.push_back({static_cast<int>(r), what});
  }
  if (v->status != Status::crash) return false;
  v->log = mpirun_tail;
  return true;
}

// 5: correct; the times and what they mean.
void correct_figures(const Instance& inst, const Job& job, const RunReport& rr, Verdict* v) {
  v->timed = true;
  v->candidate_time = rr.candidate;
  if (rr.baseline_timed) v->baseline_time = rr.baseline;
  v->off_stream_slack_ms = rr.off_stream_slack_ms;
  v->timer_margin_ms = rr.timer_margin_ms;
  v->audit = rr.audit;
  bool meaningful = job.settings.backend == Backend::cuda && !v->emulated;
  if (meaningful && rr.baseline_timed && rr.candidate.median_ms > 0)
    v->speedup = rr.baseline.median_ms / rr.candidate.median_ms;
  if (meaningful && inst.busbw_bytes > 0) {
    v->busbw_gbps = gbps(inst.busbw_bytes, rr.candidate.median_ms, inst.busbw_factor);
    if (rr.baseline_timed)
      v->baseline_busbw_gbps = gbps(inst.busbw_bytes, rr.baseline.median_ms, inst.busbw_factor);
  }
  // The floor is the cost model's, whatever ran; how close a time came to it is only
  // worth saying for real GPU times.
  v->roofline_ms = inst.roofline_ms;
  if (meaningful && inst.roofline_ms > 0 && rr.candidate.median_ms > 0)
    v->pct_roofline = 100.0 * inst.roofline_ms / rr.candidate.median_ms;
  if (!meaningful)
    add_note(v, job.settings.backend == Backend::cuda
                    ? "emulated ranks: times are not a speed measurement"
                    : std::string(backend_name(job.settings.backend)) +
                          " backend: times are not a speed measurement");
  if (meaningful && mostly_off_stream(rr.candidate))
    add_note(v, fmt::format("timing: {} of {} timed samples left work running on the GPU after "
                            "comm.stream() was done (another stream, the copy engine, a graph); "
                            "they were timed to the device being idle. Enqueue everything on "
                            "comm.stream()",
                            rr.candidate.off_stream, rr.candidate.n));
  if (rr.audit.check == TimeCheck::refuted)
    add_note(v, fmt::format("timing: the times the candidate's process reported ({} ms median) "
                            "are refuted by the judges' own clocks over {} batches of {} calls "
                            "({} ms a call, bound {} ms); the speedup and figures use the "
                            "audited time",
                            rr.audit.claimed_ms, rr.audit.batches, rr.audit.calls,
                            rr.audit.audited_ms, rr.audit.bound_ms));
  else if (rr.audit.raised > 0)
    add_note(v, fmt::format("timing: {} of {} claimed times lay below the judges' audited time "
                            "({} ms a call) by more than the bound and were raised to it",
                            rr.audit.raised, rr.candidate.n, rr.audit.audited_ms));
  if (meaningful && mostly_unconfirmed(rr.candidate) && rr.audit.check != TimeCheck::refuted)
    add_note(v, fmt::format("timing: the times the candidate's process reported are refuted "
                            "by its rank's own round trips (forged, or a process too busy to "
                            "answer); the {} samples were timed by the round trip instead",
                            rr.candidate.n));
  if (job.settings.timing == Timing::batched)
    add_note(v, fmt::format("timing: batched, nccl-tests' method ({} samples of back-to-back "
                            "calls, no L2 flush between them)",
                            rr.candidate.n));
}

}  // namespace

bool verdict_from_run(const Instance& inst, const Job& job, const RunResult& run, Verdict* v,
                      std::string* err) {
  v->size = inst.label;
  v->world = job.settings.world;
  v->backend = job.settings.backend;
  for (auto& t : job.tensors)
    if (t.output) v->tolerances.push_back({t.name, t.atol, t.rtol});
  std::vector<std::string> sandbox_errors;
  take_reports(job, run, v, &sandbox_errors);
  const std::string mpirun_tail = tail_lines(run.output, 40);
  if (ended_early(run, mpirun_tail, v) || candidate_failed(mpirun_tail, v)) return true;
  // What is left is not the candidate's doing: the baseline's failures (the problem's
  // bug) or the sandbox's.
  if (!v->failures.empty()) {
    *err = "the baseline failed (" + std::string(status_name(v->failures[0].kind)) + " on rank " +
           std::to_string(v->failure_ranks[0]) + ": " + v->failures[0].message + ")";
    return false;
  }
  if (!sandbox_errors.empty()) {
    *err = "the sandbox failed: " + sandbox_errors[0] + "\n" + mpirun_tail;
    return false;
  }
  if (unreported_ranks(run, mpirun_tail, v)) return true;
  if (run.exit_code != 0 && !run.lingering) {
    *err = fmt::format("mpirun exited with code {} although every rank reported success:\n{}",
                       run.exit_code, mpirun_tail);
    return false;
  }
  v->status = Status::correct;
  if (run.result && run.result->timed) correct_figures(inst, job, *run.result, v);
  flag_suspicious(v);
  return true;
}

}  // namespace sandbox
