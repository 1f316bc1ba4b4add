// sandbox/evaluate.cpp: build, run instances in order, map what the ranks said into a
// Verdict.
#include "evaluate.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <regex>

#include "process.h"

namespace fs = std::filesystem;

namespace sandbox {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string random_hex(int digits) {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mu);
  std::string s;
  static const char* hexd = "0123456789abcdef";
  for (int i = 0; i < digits; ++i) s += hexd[rng() & 15];
  return s;
}

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

void add_note(Verdict* v, const std::string& n) {
  if (std::find(v->notes.begin(), v->notes.end(), n) == v->notes.end()) v->notes.push_back(n);
}

// Every crashed rank had its report written (it was reporting or done) and some report
// holds a failure of the candidate's.
bool crashed_after_failing(const RunResult& run, const std::vector<Failure>& failures) {
  bool candidate_failed = false;
  for (const Failure& f : failures) candidate_failed = candidate_failed || f.who != Role::baseline;
  if (!candidate_failed) return false;
  for (const auto& [r, what] : run.crashes) {
    bool reported = r < static_cast<int>(run.reports.size()) && run.reports[r];
    bool late = r < static_cast<int>(run.statuses.size()) &&
                (run.statuses[r].phase == "report" || run.statuses[r].phase == "done");
    if (!reported || !late) return false;
  }
  return true;
}

double gbps(double bytes, double ms, double factor) {
  return ms > 0 ? bytes / (ms * 1e-3) * factor / 1e9 : 0;
}

}  // namespace

std::string make_eval_dir(const std::string& root) {
  std::error_code ec;
  fs::create_directories(root, ec);
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string dir = root + "/" + stamp + "-" + std::to_string(getpid()) + "-" + random_hex(8);
    // create_directory (not _directories) fails on an existing one: the name is ours.
    if (fs::create_directory(dir, ec) && !ec) return fs::absolute(dir).string();
  }
  return "";
}

bool verdict_from_run(const Instance& inst, const Job& job, const RunResult& run, Verdict* v,
                      std::string* err) {
  v->size = inst.label;
  v->world = job.world;
  v->backend = job.backend;
  for (auto& t : job.tensors)
    if (t.output) v->tolerances.push_back({t.name, t.atol, t.rtol});
  for (auto& n : run.notes) add_note(v, n);
  if (job.fixed_inputs)
    add_note(v, fmt::format("inputs: from --seed {}, reproducible, and so derivable by a kernel "
                            "(without --seed each rank's inputs come from a secret of its own)",
                            job.seed));
  if (!run.isolation.empty()) add_note(v, "sandbox: " + run.isolation);

  // Everything the ranks reported.
  std::vector<std::string> sandbox_errors;
  for (auto& rep : run.reports) {
    if (!rep) continue;
    v->emulated = v->emulated || rep->emulated;
    for (auto& n : rep->notes) {
      if (n.rfind("sandbox error: ", 0) == 0)
        sandbox_errors.push_back(fmt::format("rank {}: {}", rep->rank, n));
      else
        add_note(v, n);
    }
    for (auto& f : rep->failures) {
      v->failures.push_back(f);
      v->failure_ranks.push_back(rep->rank);
    }
  }
  if (run.result) {
    v->emulated = v->emulated || run.result->emulated;
    for (auto& n : run.result->notes) add_note(v, n);
  }
  std::string mpirun_tail = tail_lines(run.output, 40);

  // 0. The job's memory limit: the kernel's OOM killer ended a process of it, and what
  //    the others did next (a peer waiting forever, mpirun's abort) follows from that.
  if (run.oom_killed) {
    v->status = Status::crash;
    v->log = fmt::format(
        "out of memory: the job went past its limit of {} MiB of host memory (all "
        "ranks together) and the kernel ended it; allocate less (KFORGE_MEMORY_MIB "
        "raises the limit)",
        run.memory_bytes >> 20);
    return true;
  }
  // 1. A rank that died by a signal left a crash file: the clearest story, even when the
  //    watchdog then found its peers waiting for it. Unless every crashed rank had
  //    already written its report and the reports name the candidate's failures: then a
  //    thread it left running hit the process as it shut down, and the failures it was
  //    reported for come first.
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
  if (run.lingering) add_note(v, run.kill_reason);
  // 2. The watchdog.
  if (!run.lingering && (run.killed_by_watchdog || (run.signal != 0 && !run.stuck.empty()))) {
    v->status = Status::timeout;
    v->limit_s = run.limit_s;
    for (auto& s : run.stuck)
      v->stuck.push_back({s.rank, s.phase, s.detail, s.seconds, s.in_candidate});
    for (auto& s : run.statuses) {
      bool is_stuck = std::any_of(run.stuck.begin(), run.stuck.end(),
                                  [&](auto& x) { return x.rank == s.rank; });
      if (!is_stuck && s.present)
        v->others.push_back({s.rank, s.phase, s.detail, s.seconds, s.in_candidate});
    }
    v->log = run.kill_reason + (mpirun_tail.empty() ? "" : "\n" + mpirun_tail);
    return true;
  }
  if (!run.lingering && !run.kill_reason.empty()) {  // mpirun's own hard limit
    v->status = Status::timeout;
    v->limit_s = run.limit_s;
    for (auto& s : run.statuses)
      if (s.present) v->others.push_back({s.rank, s.phase, s.detail, s.seconds, s.in_candidate});
    v->log = run.kill_reason + "\n" + mpirun_tail;
    return true;
  }

  // 3. Failures the ranks reported: the candidate's decide; the baseline's alone are the
  //    problem's bug, not the candidate's.
  std::optional<Status> worst;
  for (auto& f : v->failures)
    if (f.who != Role::baseline && (!worst || more_severe(f.kind, *worst))) worst = f.kind;
  if (worst) {
    v->status = *worst;
    // Candidate failures first, in rank order (stable).
    std::vector<std::pair<int, Failure>> fs_;
    for (size_t i = 0; i < v->failures.size(); ++i)
      fs_.push_back({v->failure_ranks[i], v->failures[i]});
    std::stable_sort(fs_.begin(), fs_.end(), [](auto& a, auto& b) {
      return (a.second.who == Role::baseline) < (b.second.who == Role::baseline);
    });
    v->failures.clear();
    v->failure_ranks.clear();
    for (auto& [r, f] : fs_) {
      v->failures.push_back(f);
      v->failure_ranks.push_back(r);
    }
    if (v->status == Status::crash) v->log = mpirun_tail;
    return true;
  }
  if (!v->failures.empty()) {
    *err = "the baseline failed (" + std::string(status_name(v->failures[0].kind)) + " on rank " +
           std::to_string(v->failure_ranks[0]) + ": " + v->failures[0].message + ")";
    return false;
  }
  if (!sandbox_errors.empty()) {
    *err = "the sandbox failed: " + sandbox_errors[0] + "\n" + mpirun_tail;
    return false;
  }

  // 4. A rank that ended without a report.
  static const std::regex died(
      R"(process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+))");
  std::smatch m;
  for (size_t r = 0; r < run.reports.size(); ++r) {
    if (run.reports[r]) continue;
    v->status = Status::crash;
    std::string what;
    if (std::regex_search(run.output, m, died) && std::stoi(m[1]) == static_cast<int>(r)) {
      int sig = std::stoi(m[2]);
      what = fmt::format("signal {} ({}) without a report", sig, signal_name(sig));
    } else {
      std::string said = run.output.substr(0, 400);
      while (!said.empty() && said.back() == '\n') said.pop_back();
      what = fmt::format("exit code {} without a report; mpirun said: {}",
                         run.signal ? 128 + run.signal : run.exit_code, said);
    }
    RankStatus s = r < run.statuses.size() ? run.statuses[r] : RankStatus{};
    if (s.present) what += " (last in " + s.phase + (s.detail.empty() ? "" : " " + s.detail) + ")";
    v->crashes.push_back({static_cast<int>(r), what});
  }
  if (v->status == Status::crash) {
    v->log = mpirun_tail;
    return true;
  }
  if (run.exit_code != 0 && !run.lingering) {
    *err = fmt::format("mpirun exited with code {} although every rank reported success:\n{}",
                       run.exit_code, mpirun_tail);
    return false;
  }

  // 5. Correct: the figures.
  v->status = Status::correct;
  if (run.result && run.result->timed) {
    const RunReport& rr = *run.result;
    v->timed = true;
    v->candidate_time = rr.candidate;
    if (rr.baseline_timed) v->baseline_time = rr.baseline;
    v->off_stream_slack_ms = rr.off_stream_slack_ms;
    v->timer_margin_ms = rr.timer_margin_ms;
    bool meaningful = job.backend == Backend::cuda && !v->emulated;
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
      add_note(v, job.backend == Backend::cuda ? "emulated ranks: times are not a speed measurement"
                                               : std::string(backend_name(job.backend)) +
                                                     " backend: times are not a speed measurement");
    if (meaningful && mostly_off_stream(rr.candidate))
      add_note(v, fmt::format("timing: {} of {} timed samples left work running on the GPU after "
                              "comm.stream() was done (another stream, the copy engine, a graph); "
                              "they were timed to the device being idle. Enqueue everything on "
                              "comm.stream()",
                              rr.candidate.off_stream, rr.candidate.n));
    if (meaningful && mostly_unconfirmed(rr.candidate))
      add_note(v, fmt::format("timing: the times the candidate's process reported are refuted "
                              "by its rank's own round trips (forged, or a process too busy to "
                              "answer); the {} samples were timed by the round trip instead",
                              rr.candidate.n));
    if (job.timing == Timing::batched)
      add_note(v,
               fmt::format(
                   "timing: batched, nccl-tests' method ({} samples of back-to-back calls, no L2 "
                   "flush between them)",
                   rr.candidate.n));
  }
  flag_suspicious(v);
  return true;
}

bool evaluate(const EvalRequest& req, Verdict* out, std::string* err) {
  auto t0 = Clock::now();
  *out = Verdict{};
  Verdict& v = *out;
  v.problem = req.problem;
  v.candidate = req.candidate_path;
  v.world = req.world;
  v.backend = req.backend;
  if (req.eval_dir.empty()) {
    *err = "evaluate: no eval_dir (make one with make_eval_dir)";
    return false;
  }
  std::error_code ec;
  fs::create_directories(req.eval_dir, ec);
  auto finish = [&]() -> bool {
    v.seconds.push_back({"total", since(t0)});
    if (v.summary.empty()) v.summary = summarize(v);
    return write_json_file(req.eval_dir + "/verdict.json", verdict_json(v), err);
  };

  Toolchain tc = req.toolchain;
  tc.backend = req.backend;
  // The baseline first: its failure is the problem's bug, reported as an error.
  auto stage = [&](const std::string& what) {
    if (req.on_stage) req.on_stage(what);
  };
  std::string baseline_lib;
  stage("compiling");
  auto t_compile = Clock::now();
  // The baseline builds beside the candidate (on a new problem both are cold, and each
  // nvcc is mostly serial); its failure is still reported first.
  BuildResult b;
  std::string base_err;
  std::future<bool> base_built;
  if (!req.baseline_path.empty())
    base_built = std::async(std::launch::async, [&] {
      return build_library(tc, req.baseline_path, Role::baseline, &b, &base_err);
    });
  BuildResult cb;
  bool cand_built = build_library(tc, req.candidate_path, req.candidate_role, &cb, err);
  if (base_built.valid()) {
    if (!base_built.get()) {
      *err = "problem " + req.problem + ": baseline " + req.baseline_path + ": " + base_err;
      return false;
    }
    if (!b.ok) {
      *err = "problem " + req.problem + ": the baseline " + req.baseline_path +
             " does not build: " + b.summary() + (b.log.empty() ? "" : "\n" + b.log);
      return false;
    }
    baseline_lib = b.lib_path;
  }
  if (!cand_built) return false;
  v.seconds.push_back({"static", cb.static_s});
  // Wall time of both builds, the symbol checks included.
  double compile_s = since(t_compile) - cb.static_s;
  v.seconds.push_back(
      {cb.cached && (req.baseline_path.empty() || b.cached) ? "compile (cached)" : "compile",
       compile_s});
  if (!cb.ok) {
    v.status = cb.status;
    v.findings = cb.findings;
    v.log = cb.log;
    return finish();
  }

  // Every instance in one launch: the ranks bootstrap once (MPI, heap, NCCL) and run
  // them in order, stopping after the first that does not pass.
  const std::string shm_base = fmt::format("/kf-{}-{}", getpid(), random_hex(6));
  std::vector<Job> jobs;
  std::string labels;
  bool timed = false;
  for (const Instance& inst : req.instances) {
    Job job = inst.job;
    job.problem = job.problem.empty() ? req.problem : job.problem;
    job.backend = req.backend;
    if (req.world > 0) job.world = req.world;
    job.dir = fs::absolute(req.eval_dir + "/" + inst.label).string();
    job.candidate_lib = cb.lib_path;
    job.baseline_lib = baseline_lib;
    job.candidate_is_baseline = req.candidate_role == Role::baseline;
    job.shm_prefix = shm_base;
    timed = timed || job.time;
    labels += (labels.empty() ? "" : ", ") + inst.label;
    jobs.push_back(job);
  }
  if (jobs.empty()) {
    *err = "evaluate: no instances to run";
    return false;
  }
  const int world = jobs[0].world;
  stage(fmt::format("running {} rank{}: {}", world, world == 1 ? "" : "s", labels));
  auto t1 = Clock::now();
  std::vector<RunResult> runs;
  if (!run_jobs(jobs, req.launch, &runs, err)) {
    *err = "instances " + labels + ": " + *err;
    return false;
  }
  const double launched = since(t1);
  v.seconds.push_back({timed ? "launch+check+time" : "launch+check", launched});
  // Where the seconds went inside the ranks (rank 0's clock), and what is left over:
  // mpirun's start-up and shut-down.
  double inside = 0;
  for (size_t k = 0; k < runs.size(); ++k)
    if (runs[k].result)
      for (const auto& [phase, s] : runs[k].result->phase_s) {
        v.seconds.push_back({req.instances[k].label + "/" + phase, s});
        inside += s;
      }
  v.seconds.push_back({"mpirun start+exit", launched - inside});
  for (size_t k = 0; k < runs.size(); ++k) {
    Verdict iv;
    iv.problem = v.problem;
    iv.candidate = v.candidate;
    iv.seconds = v.seconds;
    if (!verdict_from_run(req.instances[k], jobs[k], runs[k], &iv, err)) {
      *err = "problem " + req.problem + ", instance " + req.instances[k].label + ": " + *err;
      return false;
    }
    v = iv;
    if (v.status != Status::correct) break;
  }
  return finish();
}

}  // namespace sandbox
