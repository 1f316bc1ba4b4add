// sandbox/evaluate.cpp: build, run the instances in one launch, and take the verdict of
// each in order (verdict_from_run.cpp).
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
