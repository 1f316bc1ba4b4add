// pkb/evaluate.cpp: the job of one PKB candidate and its verdict (evaluate.h).
#include "pkb/evaluate.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "pkb/job.h"
#include "pkb/rank_report.h"
#include "pkb/text.h"
#include "pkb/warm.h"
#include "sandbox/launch.h"
#include "sandbox/stats.h"

namespace pkb {

namespace fs = std::filesystem;
using sandbox::Status;

namespace {

// A Python traceback's last line, the exception and its message ("" from "").
std::string exception_line(const std::string& traceback) {
  const std::string msg = trim_end(traceback);
  size_t nl = msg.rfind('\n');
  return nl == std::string::npos ? msg : msg.substr(nl + 1);
}

// A candidate that replaced what its harness calls, as a finding the model can act on.
sandbox::Finding tamper_finding(const EvalSpec& spec, const RankReport& r) {
  sandbox::Finding f;
  f.rule = "tamper";
  f.file = fs::path(spec.solution).filename().string();
  std::string names;
  for (size_t i = 0; i < r.changed.size() && i < 8; ++i) names += (i ? ", " : "") + r.changed[i];
  if (r.changed.size() > 8) names += fmt::format(" and {} more", r.changed.size() - 8);
  f.what = "changes " + (names.empty() ? std::string("what the harness calls") : names);
  f.why = "the reference, the check and the timer run in the solution's process and call them";
  f.instead = "compute the result in solution() and leave torch and the harness as they are";
  return f;
}

// One rank's report into v: its status (the most severe decides), its failure or crash.
void add_rank(const EvalSpec& spec, const RankReport& j, int rank, sandbox::Verdict* v,
              Status* worst) {
  Status st = j.status.kind == RankEnd::Kind::verdict ? j.status.status : Status::crash;
  if (sandbox::more_severe(st, *worst)) *worst = st;
  const std::string& msg = j.message;
  if (st == Status::mismatch) {
    sandbox::Failure f;
    f.kind = st;
    f.tensor = j.tensor;
    f.message = fmt::format("rank {}, {}", rank, msg);
    f.trial = j.trial;
    f.max_abs = j.max_abs;
    f.bad_count = j.bad;
    f.total = j.total;
    f.phase = j.phase;
    v->failures.push_back(f);
    v->failure_ranks.push_back(rank);
  } else if (st == Status::rejected) {
    if (v->findings.empty()) v->findings.push_back(tamper_finding(spec, j));
  } else if (st == Status::compile_error || st == Status::crash) {
    // The whole message in the log; a crash's summary has the traceback's last line only.
    const std::string phase = j.phase.empty() ? "?" : j.phase;
    const std::string line = exception_line(msg);
    v->crashes.push_back({rank, st == Status::compile_error
                                    ? fmt::format("in {}: {}", phase, msg)
                                    : fmt::format("an exception in {}: {}", phase,
                                                  line.empty() ? "(no message)" : line)});
    if (v->log.find(msg) == std::string::npos) v->log = msg + "\n" + v->log;
  }
}

// "trial N: why" of the first trial, on any rank, whose `field` gives a reason; "" when none.
std::string first_reason(const std::vector<RankReport>& ranks, std::string RankTrial::*field) {
  for (size_t t = 0;; ++t) {
    bool any = false;
    for (const RankReport& j : ranks) {
      if (t >= j.trials.size()) continue;
      any = true;
      if (!(j.trials[t].*field).empty())
        return fmt::format("trial {}: {}", j.trials[t].trial, j.trials[t].*field);
    }
    if (!any) return "";
  }
}

// What the person comparing with PKB must know of how the trials were timed, said once
// each, to the person only (a model told that timed outputs went unchecked would know what
// it could get away with): outputs left unchecked, clones asked for and not had, a warmup
// cut short.
void add_trial_notes(const std::vector<RankReport>& ranks, sandbox::Verdict* v) {
  if (std::string why = first_reason(ranks, &RankTrial::unchecked); !why.empty())
    v->harness_notes.push_back("the timed calls' outputs were not checked on fresh inputs (" + why +
                               "): the speedup is as trustworthy as PKB's own, which checks none");
  if (std::string why = first_reason(ranks, &RankTrial::no_clones); !why.empty())
    v->harness_notes.push_back("--timed-check clones could not be had (" + why +
                               "): the timed calls were checked as with --timed-check last");
  if (std::string why = first_reason(ranks, &RankTrial::short_warmup); !why.empty())
    v->harness_notes.push_back("the warm-up made fewer calls than PKB's (" + why +
                               "); --warmup-s 0 makes all of them, however long they take");
}

// The times of a correct run: per trial the slowest rank's medians; their medians. The
// speedup: the median of the trials' own (the driver's median of paired rounds, the same
// on every rank), or, from a driver that gives none, the ratio of the medians.
void add_times(const std::vector<RankReport>& ranks, sandbox::Verdict* v) {
  std::vector<double> ref, cand, speedups;
  for (size_t t = 0;; ++t) {
    double r = 0, c = 0, s = -1;
    bool any = false;
    for (const RankReport& j : ranks) {
      if (t >= j.trials.size()) continue;
      any = true;
      r = std::max(r, j.trials[t].ref_ms);
      c = std::max(c, j.trials[t].cand_ms);
      s = std::max(s, j.trials[t].speedup);
    }
    if (!any) break;
    ref.push_back(r), cand.push_back(c);
    if (s > 0) speedups.push_back(s);
  }
  if (cand.empty()) return;
  add_trial_notes(ranks, v);
  v->timed = true;
  v->baseline_time = sandbox::time_stats(ref);
  v->candidate_time = sandbox::time_stats(cand);
  if (speedups.size() == cand.size())
    v->speedup = sandbox::time_stats(speedups).median_ms;
  else if (v->candidate_time.median_ms > 0)
    v->speedup = v->baseline_time.median_ms / v->candidate_time.median_ms;
}

// Where each rank was when the job was killed (rank<R>.phase: the driver's phase, and in a
// trial whose calls ran then, "time trial 0 (the candidate's calls)"). in_candidate stays
// false: it means inside kf_run, a native problem's entry; here the detail says whose code.
void add_stuck(const EvalSpec& spec, const sandbox::ProcessResult& run, sandbox::Verdict* v) {
  v->limit_s = spec.timeout_s;
  // To the person only: a reference this slow is not the solution's to fix.
  if (run.timed_out)
    v->harness_notes.push_back(
        fmt::format("the whole job may take {:g} s; where the reference's own calls are that slow, "
                    "--job-limit gives the job more",
                    spec.timeout_s));
  for (int r = 0; r < spec.world; ++r) {
    std::string phase = trim_end(read_text(fmt::format("{}/rank{}.phase", spec.work_dir, r)));
    sandbox::Verdict::Stuck s;
    s.rank = r;
    s.seconds = run.seconds;
    size_t open = phase.rfind(" (");
    if (open != std::string::npos && phase.back() == ')') {
      s.detail = phase.substr(open + 2, phase.size() - open - 3);
      phase.resize(open);
    }
    s.phase = phase.empty() ? "start (no phase reported)" : phase;
    v->stuck.push_back(s);
  }
}

// The job says this setup cannot run it: a rank reported "environment", or no rank wrote
// anything (the driver's first act is every rank's phase file). A timeout is a verdict.
bool setup_claimed(const EvalSpec& spec, const sandbox::ProcessResult& run,
                   const Reports& reports) {
  if (run.timed_out || run.killed) return false;
  bool any = false;
  std::error_code ec;
  for (int r = 0; r < spec.world; ++r) {
    if (reports[r] && reports[r]->status.kind == RankEnd::Kind::environment) return true;
    any = any || reports[r] || fs::exists(fmt::format("{}/rank{}.phase", spec.work_dir, r), ec);
  }
  return !any;
}

// The first rank that says the reference's code or the inputs failed, as "rank R, PHASE
// (making the inputs): the exception's line"; "" when none says so.
std::string reference_failure(const Reports& reports) {
  for (size_t r = 0; r < reports.size(); ++r) {
    if (!reports[r] || reports[r]->status.kind != RankEnd::Kind::reference) continue;
    const std::string line = exception_line(reports[r]->message);
    const std::string& phase = reports[r]->phase;
    return fmt::format("rank {}, {} ({}): {}", r, phase.empty() ? "?" : phase,
                       reports[r]->side == "inputs" ? "making the inputs" : "the reference's code",
                       line);
  }
  return "";
}

// After a job whose `reports` say the reference failed: the job again with the reference
// as its own candidate (unless it was). Where that fails so too, no solution can be judged
// on this setup and *why says so; "" where it does not (the solution made the reference
// fail: it shares the reference's process). False (*err) when kforge could not run it.
bool reference_fails_alone(const EvalSpec& spec, const Reports& reports, std::string* why,
                           std::string* err) {
  std::error_code ec;
  std::string failure = reference_failure(reports);
  if (!fs::equivalent(spec.solution, spec.problem.reference, ec)) {
    EvalSpec alone = spec;
    alone.solution = spec.problem.reference;
    alone.work_dir = spec.work_dir + "/reference_alone";
    fs::create_directories(alone.work_dir, ec);
    sandbox::ProcessResult pr;
    sandbox::ConfinedRun cr;
    if (!run_job(alone, {}, &pr, &cr, err)) return false;
    failure = reference_failure(read_reports(alone));
  }
  why->clear();
  if (!failure.empty())
    *why = fmt::format(
        "{}: PKB's reference fails on this setup at world {}, with no solution loaded ({}). No "
        "solution can be judged here: the reference may need more ranks (--world), or more "
        "device memory than kforge's one job, which holds both sides' inputs, has (PKB runs "
        "each side in a job of its own)",
        spec.problem.name, spec.world, failure);
  return true;
}

// The verdict from a finished job: the ranks' reports and how the job ended.
sandbox::Verdict verdict_from_ranks(const EvalSpec& spec, const sandbox::ProcessResult& run,
                                    const Reports& reports) {
  sandbox::Verdict v;
  v.problem = "pkb:" + spec.problem.name;
  v.candidate = spec.solution;
  v.world = spec.world;
  v.baseline_label = "the reference";
  v.log = tail(run.output, 4000);
  Status worst = Status::correct;
  std::vector<RankReport> ranks;
  for (int r = 0; r < spec.world; ++r) {
    if (!reports[r]) {
      if (run.timed_out || run.killed) continue;  // the timeout says why
      worst = sandbox::more_severe(Status::crash, worst) ? Status::crash : worst;
      std::string how =
          run.signal ? sandbox::signal_name(run.signal) : fmt::format("exit {}", run.exit_code);
      v.crashes.push_back(
          {r, fmt::format("no result (the job ended with {}): {}", how, tail(run.output, 600))});
      continue;
    }
    add_rank(spec, *reports[r], r, &v, &worst);
    ranks.push_back(*reports[r]);
  }
  if ((run.timed_out || run.killed) && !sandbox::more_severe(worst, Status::timeout)) {
    worst = Status::timeout;
    add_stuck(spec, run, &v);
  }
  if (worst == Status::correct && run.exit_code != 0) {
    worst = Status::crash;
    v.crashes.push_back(
        {0, fmt::format("the job exited {} after every rank passed", run.exit_code)});
  }
  v.status = worst;
  if (worst == Status::correct) add_times(ranks, &v);
  v.seconds.push_back({"job", run.seconds});
  v.summary = sandbox::summarize(v);
  return v;
}

}  // namespace

bool evaluate(const EvalSpec& spec, sandbox::Verdict* out, std::string* err,
              agent::SetupFault* fault) {
  if (fault) *fault = agent::SetupFault::none;
  std::error_code ec;
  if (!fs::is_directory(spec.work_dir, ec)) {
    *err = "the eval's work folder " + spec.work_dir + " does not exist: create it first";
    return false;
  }
  if (!fs::is_regular_file(spec.solution, ec)) {
    *err = "the solution " + spec.solution +
           " is not a file: give a Python module defining solution(...)";
    return false;
  }
  sandbox::ProcessResult pr;
  sandbox::ConfinedRun cr;
  WarmUse use;
  std::string not_warm;
  if (!(spec.warm && spec.warm->run(spec, &pr, &use, &not_warm)) &&
      !run_job(spec, {}, &pr, &cr, err))
    return false;
  const Reports reports = read_reports(spec);
  const bool claimed = setup_claimed(spec, pr, reports);
  if (claimed) {
    std::string why;
    if (!probe_setup(spec, &why, err)) return false;
    if (!why.empty()) {
      if (fault) *fault = agent::SetupFault::machine;
      *err = why;
      return false;
    }
  }
  const bool blamed = !reference_failure(reports).empty();
  if (blamed) {
    std::string why;
    if (!reference_fails_alone(spec, reports, &why, err)) return false;
    if (!why.empty()) {
      if (fault) *fault = agent::SetupFault::problem;
      *err = why;
      return false;
    }
  }
  *out = verdict_from_ranks(spec, pr, reports);
  if (blamed)
    out->notes.push_back(
        "the reference failed with this solution loaded, and not without it: that was the "
        "solution's doing");
  if (claimed)
    out->notes.push_back(
        "the job said this setup cannot run it, but the setup checked without the solution can: "
        "that was the solution's doing");
  if (cr.oom_killed) out->notes.push_back("the job hit its memory limit");
  if (!cr.how.empty()) out->harness_notes.push_back("isolation: " + cr.how);
  if (use.used)
    out->harness_notes.push_back(fmt::format(
        "warm interpreter: eval {} of {} ({}); the server under {}, this eval in a child of "
        "its own under Landlock",
        use.eval, spec.warm->root(), use.reused ? "up before it" : "started with it",
        spec.warm->isolation().empty() ? "no isolation" : spec.warm->isolation()));
  else if (spec.warm)
    out->harness_notes.push_back("warm interpreter not used: " + not_warm + "; the job ran cold");
  return true;
}

}  // namespace pkb
