// pkb/evaluate.cpp: the job of one PKB candidate and its verdict (evaluate.h).
#include "pkb/evaluate.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

Status status_of(const std::string& s) {
  Status st = Status::crash;
  if (!sandbox::parse_enum(s, &st)) return Status::crash;
  return st;
}

// One rank's report into v: its status (the most severe decides), its failure or crash.
void add_rank(const nlohmann::json& j, int rank, sandbox::Verdict* v, Status* worst) {
  Status st = status_of(j.value("status", "crash"));
  if (sandbox::more_severe(st, *worst)) *worst = st;
  std::string msg = j.value("message", "");
  if (st == Status::mismatch) {
    sandbox::Failure f;
    f.kind = st;
    f.tensor = j.value("tensor", "");
    f.message = fmt::format("rank {}, {}", rank, msg);
    f.trial = j.value("trial", -1);
    f.max_abs = j.value("max_abs", 0.0);
    f.bad_count = j.value("bad", 0);
    f.total = j.value("total", 0);
    f.phase = j.value("phase", "");
    v->failures.push_back(f);
    v->failure_ranks.push_back(rank);
  } else if (st == Status::crash || st == Status::compile_error) {
    v->crashes.push_back({rank, fmt::format("in {}: {}", j.value("phase", "?"), msg)});
    if (st == Status::compile_error && v->log.find(msg) == std::string::npos)
      v->log = msg + "\n" + v->log;
  }
}

// The times of a correct run: per trial the slowest rank's medians; their medians. The
// speedup: the median of the trials' own (the driver's median of paired rounds, the same
// on every rank), or, from a driver that gives none, the ratio of the medians.
void add_times(const std::vector<nlohmann::json>& ranks, sandbox::Verdict* v) {
  std::vector<double> ref, cand, speedups;
  for (size_t t = 0;; ++t) {
    double r = 0, c = 0, s = -1;
    bool any = false;
    for (auto& j : ranks) {
      auto& trials = j["trials"];
      if (!trials.is_array() || t >= trials.size()) continue;
      any = true;
      r = std::max(r, trials[t].value("ref_ms", 0.0));
      c = std::max(c, trials[t].value("cand_ms", 0.0));
      s = std::max(s, trials[t].value("speedup", -1.0));
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
std::vector<std::string> python_dirs(const std::string& python,
                                     const std::vector<std::string>& env) {
  std::string path = python;
  if (path.find('/') == std::string::npos) {
    std::string dirs;
    for (auto& kv : env)
      if (kv.rfind("PATH=", 0) == 0) dirs = kv.substr(5);
    std::stringstream ss(dirs);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty() && fs::exists(d + "/" + python)) {
        path = d + "/" + python;
        break;
      }
  }
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

sandbox::Verdict verdict_from_ranks(const EvalSpec& spec, const sandbox::ProcessResult& run) {
  sandbox::Verdict v;
  v.problem = "pkb:" + spec.problem.name;
  v.candidate = spec.solution;
  v.world = spec.world;
  v.baseline_label = "the reference";
  v.log = tail(run.output, 4000);
  Status worst = Status::correct;
  std::vector<nlohmann::json> ranks;
  for (int r = 0; r < spec.world; ++r) {
    std::string path = fmt::format("{}/rank{}.json", spec.work_dir, r);
    nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      if (run.timed_out || run.killed) continue;  // the timeout says why
      worst = sandbox::more_severe(Status::crash, worst) ? Status::crash : worst;
      std::string how =
          run.signal ? sandbox::signal_name(run.signal) : fmt::format("exit {}", run.exit_code);
      v.crashes.push_back(
          {r, fmt::format("no result (the job ended with {}): {}", how, tail(run.output, 600))});
      continue;
    }
    add_rank(j, r, &v, &worst);
    ranks.push_back(j);
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

bool evaluate(const EvalSpec& spec, sandbox::Verdict* out, std::string* err) {
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
    jail.read_only = {spec.checkout, fs::absolute(spec.solution).string(), ps.argv[1]};
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
  *out = verdict_from_ranks(spec, pr);
  if (cr.oom_killed) out->notes.push_back("the job hit its memory limit");
  if (!cr.how.empty()) out->notes.push_back("isolation: " + cr.how);
  return true;
}

}  // namespace pkb
