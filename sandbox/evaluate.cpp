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

#include "oracle.h"
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

namespace {

// The instances as jobs of one launch. Their libraries are still to be built: they will
// be in <eval_dir>/lib, and the ranks wait at its gate until they are (rank/build_gate.h).
std::vector<Job> make_jobs(const EvalRequest& req, const std::string& lib_dir, std::string* labels,
                           bool* timed) {
  const std::string shm_base = fmt::format("/kf-{}-{}", getpid(), random_hex(6));
  std::vector<Job> jobs;
  for (const Instance& inst : req.instances) {
    Job job = inst.job;
    job.settings = req.settings;
    job.size = inst.label;
    job.dir = fs::absolute(req.eval_dir + "/" + inst.label).string();
    job.candidate_lib = lib_dir + "/candidate.so";
    job.baseline_lib = req.baseline_path.empty() ? "" : lib_dir + "/baseline.so";
    job.build_gate = lib_dir + "/built.json";
    job.candidate_is_baseline = req.candidate_role == Role::baseline;
    job.shm_prefix = shm_base;
    *timed = *timed || job.timed;
    *labels += (labels->empty() ? "" : ", ") + inst.label;
    jobs.push_back(job);
  }
  return jobs;
}

// The baseline and the candidate, side by side (on a new problem both are cold, and each
// nvcc is mostly serial). False with *err when the baseline does not build (the
// problem's bug) or a build could not run; a bad candidate is cb->ok false.
bool build_both(const EvalRequest& req, BuildResult* b, BuildResult* cb, BuildResult* ob,
                std::string* err) {
  Toolchain tc = req.toolchain;
  tc.backend = req.settings.backend;
  std::string base_err, oracle_err;
  std::future<bool> base_built, oracle_built;
  if (!req.problem_dir.empty())
    oracle_built = std::async(std::launch::async,
                              [&] { return build_oracle(tc, req.problem_dir, ob, &oracle_err); });
  if (!req.baseline_path.empty())
    base_built = std::async(std::launch::async, [&] {
      return build_library(tc, req.baseline_path, Role::baseline, b, &base_err);
    });
  bool cand_built = build_library(tc, req.candidate_path, req.candidate_role, cb, err);
  if (oracle_built.valid() && !oracle_built.get()) {  // the problem's bug, as the baseline's
    *err = "problem " + req.settings.problem + ": " + oracle_err;
    return false;
  }
  if (base_built.valid()) {  // the baseline's failure is reported first
    if (!base_built.get()) {
      *err =
          "problem " + req.settings.problem + ": baseline " + req.baseline_path + ": " + base_err;
      return false;
    }
    if (!b->ok) {
      *err = "problem " + req.settings.problem + ": the baseline " + req.baseline_path +
             " does not build: " + b->summary() + (b->log.empty() ? "" : "\n" + b->log);
      return false;
    }
  }
  return cand_built;
}

}  // namespace

void prebuild(const EvalRequest& req) {
  BuildResult b, cb, ob;
  std::string err;
  build_both(req, &b, &cb, &ob, &err);
}

namespace {

// A built library into the launch's lib folder: a hard link to the cache's copy, or a copy
// where the two are on different file systems.
bool place_library(const std::string& built, const std::string& to, std::string* err) {
  std::error_code ec;
  fs::create_hard_link(built, to, ec);
  if (ec) fs::copy_file(built, to, fs::copy_options::overwrite_existing, ec);
  if (ec) *err = "cannot place " + built + " at " + to + ": " + ec.message();
  return !ec;
}

// Where the seconds went inside the ranks (rank 0's clock), and what is left over of the
// launch: mpirun's start-up and shut-down (on warm ranks: the request and its reply).
void record_phases(const EvalRequest& req, const std::vector<RunResult>& runs, double launched,
                   bool warm, Verdict* v) {
  double inside = 0;
  for (size_t k = 0; k < runs.size(); ++k)
    if (runs[k].result)
      for (const auto& [phase, s] : runs[k].result->phase_s) {
        v->seconds.push_back({req.instances[k].label + "/" + phase, s});
        inside += s;
      }
  v->seconds.push_back({warm ? "warm request+reply" : "mpirun start+exit", launched - inside});
}

// What the verdict says of warm ranks: whether the eval ran on a set, and how.
void note_warm(const WarmUse& w, Verdict* v) {
  if (w.used)
    v->harness_notes.push_back(
        w.reused ? fmt::format("warm ranks: eval {} of the set at {}; MPI, the device context, "
                               "the heap and NCCL were up already (no bootstrap), the runners "
                               "and the inputs' secret are this eval's own",
                               w.eval, w.root)
                 : fmt::format("warm ranks: this eval started the set at {}", w.root));
  else if (!w.fallback.empty())
    v->harness_notes.push_back("warm ranks: not used (" + w.fallback +
                               "); the eval ran on ranks of its own");
}

// The verdict of each instance the ranks reached, in order; the first that is not correct
// is the evaluation's.
bool take_verdicts(const EvalRequest& req, const std::vector<Job>& jobs,
                   const std::vector<RunResult>& runs, Verdict* v, std::string* err) {
  for (size_t k = 0; k < runs.size(); ++k) {
    Verdict iv;
    iv.problem = v->problem;
    iv.candidate = v->candidate;
    iv.seconds = v->seconds;
    if (!verdict_from_run(req.instances[k], jobs[k], runs[k], &iv, err)) {
      *err =
          "problem " + req.settings.problem + ", instance " + req.instances[k].label + ": " + *err;
      return false;
    }
    *v = iv;
    if (v->status != Status::correct) break;
  }
  return true;
}

// The candidate's, the baseline's and the oracle's libraries built (or found cached) and
// put where the first job's ranks load them; false only for kforge's own failures (a
// candidate that does not compile is cb->ok false).
bool build_and_place(const EvalRequest& req, const Job& first, BuildResult* b, BuildResult* cb,
                     BuildResult* ob, std::string* err) {
  if (!build_both(req, b, cb, ob, err)) return false;
  if (!cb->ok) return true;
  return place_library(cb->lib_path, first.candidate_lib, err) &&
         (req.baseline_path.empty() || place_library(b->lib_path, first.baseline_lib, err)) &&
         (req.problem_dir.empty() ||
          place_library(ob->lib_path, oracle_lib_beside(first.candidate_lib), err));
}

}  // namespace

bool evaluate(const EvalRequest& req, Verdict* out, std::string* err) {
  auto t0 = Clock::now();
  *out = Verdict{};
  Verdict& v = *out;
  v.problem = req.settings.problem;
  v.candidate = req.candidate_path;
  v.world = req.settings.world;
  v.backend = req.settings.backend;
  const std::string lib_dir = req.eval_dir + "/lib";
  std::error_code ec;
  if (req.eval_dir.empty() || (fs::create_directories(lib_dir, ec), ec)) {
    *err = "evaluate: no usable eval_dir (make one with make_eval_dir): " + req.eval_dir;
    return false;
  }
  auto finish = [&]() -> bool {
    v.seconds.push_back({"total", since(t0)});
    if (v.summary.empty()) v.summary = summarize(v);
    return write_json_file(req.eval_dir + "/verdict.json", verdict_json(v), err);
  };
  auto stage = [&](const std::string& what) {
    if (req.on_stage) req.on_stage(what);
  };
  std::string labels;
  bool timed = false;
  std::vector<Job> jobs = make_jobs(req, fs::absolute(lib_dir).string(), &labels, &timed);
  if (jobs.empty()) {
    *err = "evaluate: no instances to run";
    return false;
  }
  // Every instance in one launch, started now: the ranks bootstrap (MPI, heap, NCCL) while
  // the libraries build, then run the instances in order, stopping after the first that
  // does not pass.
  const auto t_launch = Clock::now();
  std::vector<RunResult> runs;
  std::string launch_err;
  WarmUse warm;
  std::future<bool> launch = std::async(std::launch::async, [&] {
    if (req.warm && req.warm->run(jobs, req.launch, &runs, &warm, &launch_err)) return true;
    if (req.warm) warm.fallback = launch_err;  // nothing ran on the set: cold instead
    return run_jobs(jobs, req.launch, &runs, &launch_err);
  });
  auto open_gate = [&](bool go, std::string* e) {
    return write_json_file(jobs[0].build_gate, nlohmann::json{{"ok", go}}, e);
  };
  stage("compiling");
  const auto t_compile = Clock::now();
  BuildResult b, cb, ob;
  bool built = build_and_place(req, jobs[0], &b, &cb, &ob, err);
  const double compile_s = since(t_compile) - cb.static_s;  // both builds, symbols included
  std::string gate_err;
  const bool gate_open = open_gate(built && cb.ok, &gate_err);
  if (!gate_open)  // the ranks wait until the watchdog ends them; say why
    *err = "cannot write the build gate: " + gate_err;
  const int world = jobs[0].settings.world;
  if (built && gate_open && cb.ok)
    stage(fmt::format("running {} rank{}: {}", world, world == 1 ? "" : "s", labels));
  const bool launched_ok = launch.get();
  if (!built || !gate_open) return false;
  v.seconds.push_back({"static", cb.static_s});
  v.seconds.push_back(
      {cb.cached && (req.baseline_path.empty() || b.cached) ? "compile (cached)" : "compile",
       compile_s});
  if (!cb.ok) {  // the ranks went home at the gate
    v.status = cb.status;
    v.findings = cb.findings;
    v.log = cb.log;
    return finish();
  }
  if (!launched_ok) {
    *err = "instances " + labels + ": " + launch_err;
    return false;
  }
  // The launch overlapped the build: its seconds count from its own start.
  const double launched = since(t_launch);
  v.seconds.push_back({timed ? "launch+check+time" : "launch+check", launched});
  record_phases(req, runs, launched, warm.reused, &v);
  if (!take_verdicts(req, jobs, runs, &v, err)) return false;
  note_warm(warm, &v);
  return finish();
}

}  // namespace sandbox
