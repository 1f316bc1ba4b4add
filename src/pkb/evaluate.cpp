// pkb/evaluate.cpp: the job of one PKB candidate and its verdict (evaluate.h).
#include "pkb/evaluate.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "sandbox/confine.h"
#include "sandbox/launch.h"
#include "sandbox/sha256.h"
#include "suite/paths.h"

namespace pkb {

namespace fs = std::filesystem;
using sandbox::Status;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

sandbox::TimeStats stats_of(std::vector<double> v) {
  sandbox::TimeStats t;
  if (v.empty()) return t;
  std::sort(v.begin(), v.end());
  t.n = static_cast<int>(v.size());
  t.median_ms = median(v);
  t.min_ms = v.front(), t.max_ms = v.back();
  t.p10_ms = v[v.size() / 10];
  t.p90_ms = v[std::min(v.size() - 1, v.size() * 9 / 10)];
  return t;
}

// One trial's times in a rank's report.
struct RankTrial {
  int trial = 0;
  double ref_ms = 0, cand_ms = 0;
  double speedup = -1;  // the median of its paired rounds' (-1: a driver that gives none)
};

// What the driver (sandbox/pkb/pkb_eval.py) writes as <work_dir>/rank<R>.json.
struct RankReport {
  // A sandbox::Status's name, or "environment": the setup cannot run the job (no torch, no
  // CUDA, fewer GPUs than ranks), which is no candidate's verdict.
  std::string status = "crash";
  std::string phase, message;
  std::string python;  // the interpreter's sys.executable
  std::string tensor;  // mismatch: the output that differs, and how
  int trial = -1;
  double max_abs = 0;
  int64_t bad = 0, total = 0;
  std::vector<std::string> changed;  // rejected: what the candidate replaced (pkb_tamper.py)
  std::vector<RankTrial> trials;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankTrial, trial, ref_ms, cand_ms, speedup)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankReport, status, phase, message, python, tensor,
                                                trial, max_abs, bad, total, changed, trials)

// Every rank's report; a rank whose file is missing or not a report has none.
std::vector<std::optional<RankReport>> read_reports(const EvalSpec& spec) {
  std::vector<std::optional<RankReport>> out(static_cast<size_t>(spec.world));
  for (int r = 0; r < spec.world; ++r) {
    nlohmann::json j = nlohmann::json::parse(
        read_file(fmt::format("{}/rank{}.json", spec.work_dir, r)), nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    try {
      out[static_cast<size_t>(r)] = j.get<RankReport>();
    } catch (const nlohmann::json::exception&) {
    }
  }
  return out;
}

Status status_of(const std::string& s) {
  Status st = Status::crash;
  if (!sandbox::parse_enum(s, &st)) return Status::crash;
  return st;
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
  Status st = status_of(j.status);
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
  } else if (st == Status::crash || st == Status::compile_error) {
    v->crashes.push_back({rank, fmt::format("in {}: {}", j.phase.empty() ? "?" : j.phase, msg)});
    if (st == Status::compile_error && v->log.find(msg) == std::string::npos)
      v->log = msg + "\n" + v->log;
  }
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
  v->timed = true;
  v->baseline_time = stats_of(ref);
  v->candidate_time = stats_of(cand);
  if (speedups.size() == cand.size())
    v->speedup = stats_of(speedups).median_ms;
  else if (v->candidate_time.median_ms > 0)
    v->speedup = v->baseline_time.median_ms / v->candidate_time.median_ms;
}

// Where each rank was when the job was killed (rank<R>.phase).
void add_stuck(const EvalSpec& spec, const sandbox::ProcessResult& run, sandbox::Verdict* v) {
  v->limit_s = spec.timeout_s;
  for (int r = 0; r < spec.world; ++r) {
    std::string phase = read_file(fmt::format("{}/rank{}.phase", spec.work_dir, r));
    sandbox::Verdict::Stuck s;
    s.rank = r;
    s.phase = phase.empty() ? "start (no phase reported)" : phase;
    s.seconds = run.seconds;
    s.in_candidate =
        phase.find("candidate") != std::string::npos || phase.find("trial") != std::string::npos;
    v->stuck.push_back(s);
  }
}

// What the jail must show of the Python the job runs: the prefix it is in (a virtual
// environment's root; a stand-in's own folder) and, through the venv's python3 link, the
// interpreter's installation. /usr is in every jail already.
// python as the job finds it: a name looked up on the environment's PATH, else as given.
std::string on_path(const std::string& python, const std::vector<std::string>& env) {
  if (python.find('/') != std::string::npos) return python;
  std::string dirs;
  for (auto& kv : env)
    if (kv.rfind("PATH=", 0) == 0) dirs = kv.substr(5);
  std::stringstream ss(dirs);
  for (std::string d; std::getline(ss, d, ':');)
    if (!d.empty() && fs::exists(d + "/" + python)) return d + "/" + python;
  return python;
}

std::vector<std::string> python_dirs(const std::string& python,
                                     const std::vector<std::string>& env) {
  std::string path = on_path(python, env);
  std::vector<std::string> out;
  std::error_code ec;
  if (path.find('/') == std::string::npos) return out;
  fs::path bin = fs::absolute(path, ec).parent_path();
  // .../venv/bin/python3: the venv; anything else (a stand-in): only its own folder.
  bool prefix = bin.filename() == "bin" && bin.parent_path() != bin.root_path();
  out.push_back(prefix ? bin.parent_path().string() : bin.string());
  fs::path py = fs::canonical(bin / "python3", ec).parent_path();
  if (!ec && py.filename() == "bin" && py.parent_path() != py.root_path())
    out.push_back(py.parent_path().string());
  return out;
}

// What to say of a python that did not start the driver: a script (a pyenv shim, a
// wrapper) runs programs the sandbox may not show, where the interpreter itself would run.
std::string script_hint(const std::string& path) {
  std::ifstream f(path);
  char head[2] = {0, 0};
  if (!f.read(head, 2) || head[0] != '#' || head[1] != '!') return "";
  return path +
         " is a script, such as a pyenv shim, and runs programs the sandbox does not show: give "
         "the interpreter itself, the path that python3 -c 'import sys; print(sys.executable)' "
         "prints. ";
}

}  // namespace

std::vector<std::string> job_argv(const EvalSpec& s) {
  std::string python = s.python;
  if (python.empty()) python = std::getenv("KF_PYTHON") ? std::getenv("KF_PYTHON") : "";
  if (python.empty()) python = "python3";
  std::string driver =
      s.driver.empty() ? suite::default_paths().source_root + "/sandbox/pkb/pkb_eval.py" : s.driver;
  std::string cache =
      s.ext_cache.empty() ? suite::default_paths().cache_dir + "/pkb_ext" : s.ext_cache;
  return {python,         driver,
          "--nproc",      std::to_string(s.world),
          "--pkb",        s.checkout,
          "--problem-id", std::to_string(s.problem.number),
          "--reference",  s.problem.reference,
          "--solution",   s.solution,
          "--out",        s.work_dir,
          "--trials",     std::to_string(s.trials),
          "--warmup",     std::to_string(s.warmup),
          "--iters",      std::to_string(s.iters),
          "--atol",       fmt::format("{}", s.atol),
          "--rtol",       fmt::format("{}", s.rtol),
          "--dtype",      s.dtype,
          "--ext-cache",  cache};
}

bool setup_failure(const EvalSpec& spec, const sandbox::ProcessResult& run, std::string* why) {
  if (run.timed_out || run.killed) return false;  // a verdict: timeout
  std::vector<std::optional<RankReport>> reports = read_reports(spec);
  for (size_t r = 0; r < reports.size(); ++r)
    if (reports[r] && reports[r]->status == "environment") {
      *why = fmt::format(
          "this setup cannot run a PKB job: rank {} says {} (its python: {}). A PKB job needs a "
          "python3 whose torch is built for CUDA (--python or KF_PYTHON) and a GPU for each rank",
          r, reports[r]->message, reports[r]->python);
      return true;
    }
  std::error_code ec;
  for (int r = 0; r < spec.world; ++r)  // the driver's first act: every rank's phase file
    if (fs::exists(fmt::format("{}/rank{}.phase", spec.work_dir, r), ec) || reports[r])
      return false;
  std::string python = on_path(job_argv(spec)[0], sandbox::scrubbed_env("/", false, {}));
  std::string how =
      run.signal ? sandbox::signal_name(run.signal) : fmt::format("exit {}", run.exit_code);
  *why = fmt::format(
      "the job's python, {}, did not start kforge's PKB driver (it ended with {}). {}Give "
      "--python or KF_PYTHON a python3 whose torch is built for CUDA. Its output: {}",
      python, how, script_hint(python), tail(run.output, 600));
  return true;
}

sandbox::Verdict verdict_from_ranks(const EvalSpec& spec, const sandbox::ProcessResult& run) {
  sandbox::Verdict v;
  v.problem = "pkb:" + spec.problem.name;
  v.candidate = spec.solution;
  v.world = spec.world;
  v.baseline_label = "the reference";
  v.log = tail(run.output, 4000);
  Status worst = Status::correct;
  std::vector<RankReport> ranks;
  std::vector<std::optional<RankReport>> reports = read_reports(spec);
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

bool evaluate(const EvalSpec& spec, sandbox::Verdict* out, std::string* err, bool* setup_error) {
  if (setup_error) *setup_error = false;
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
  std::string scratch = spec.work_dir + "/scratch";
  fs::create_directories(scratch, ec);
  sandbox::ProcessSpec ps;
  ps.argv = job_argv(spec);
  std::string cache = ps.argv.back();
  fs::create_directories(cache, ec);
  ps.env = sandbox::scrubbed_env(scratch, false, {});
  ps.cwd = scratch;
  ps.limit_s = spec.timeout_s;
  sandbox::Confined confined;
  if (spec.confine && sandbox::isolation_mode() == "bwrap") {
    sandbox::Confinement jail;
    // The driver's folder: it imports its neighbours (pkb_timing.py, pkb_tamper.py).
    jail.read_only = {spec.checkout, fs::absolute(spec.solution).string(),
                      fs::absolute(ps.argv[1]).parent_path().string()};
    for (auto& dir : python_dirs(ps.argv[0], ps.env)) jail.read_only.push_back(dir);
    // Of the extension cache, only this source's own folder (the driver keys it the same
    // way): a candidate cannot plant a library under another source's key.
    const std::string own =
        cache + "/" + sandbox::sha256_hex(read_file(spec.solution)).substr(0, 16);
    fs::create_directories(own, ec);
    jail.writable = {spec.work_dir, own};
    jail.gpu = true;
    if (!confined.prepare(jail, &ps, err)) return false;
  }
  sandbox::ProcessResult pr;
  if (!sandbox::run_process(ps, &pr, err)) return false;
  sandbox::wait_gone(pr.killed_pids, 15.0);
  sandbox::ConfinedRun cr = confined.finish();
  if (setup_failure(spec, pr, err)) {
    if (setup_error) *setup_error = true;
    return false;
  }
  *out = verdict_from_ranks(spec, pr);
  if (cr.oom_killed) out->notes.push_back("the job hit its memory limit");
  if (!cr.how.empty()) out->notes.push_back("isolation: " + cr.how);
  return true;
}

}  // namespace pkb
