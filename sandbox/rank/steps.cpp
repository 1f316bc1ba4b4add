// sandbox/rank/steps.cpp: the steps of one launch's jobs on a rank (rank/steps.h), as
// rank/main.cpp runs them for the jobs on its command line and rank/serve.cpp for each
// later request of a warm set.
#include "steps.h"

#include <fmt/format.h>
#include <mpi.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "check.h"
#include "data.h"
#include "setup.h"
#include "status.h"
#include "timing.h"

namespace sandbox::rank {

using Clock = std::chrono::steady_clock;

namespace {
Clock::time_point g_last;  // the previous mark
// The current step's parts (PartClock), in first-timed order. Only the outermost clock
// counts: the audit's calls are the audit's.
std::vector<std::pair<std::string, double>> g_parts;
int g_depth = 0;
}  // namespace

PartClock::PartClock(const char* part)
    : part_(g_depth++ == 0 ? part : nullptr), t0_(Clock::now()) {}

PartClock::~PartClock() {
  --g_depth;
  if (!part_) return;
  const double s = std::chrono::duration<double>(Clock::now() - t0_).count();
  for (auto& [name, total] : g_parts) {
    if (name == part_) {
      total += s;
      return;
    }
  }
  g_parts.push_back({part_, s});
}

void set_start(Clock::time_point t0) {
  g_last = t0;
}

void mark(Results& out, const char* name) {
  Clock::time_point now = Clock::now();
  double parts = 0;
  for (const auto& [part, s] : g_parts) {
    out.run.phase_s.push_back({std::string(name) + "/" + part, s});
    parts += s;
  }
  g_parts.clear();
  out.run.phase_s.push_back({name, std::chrono::duration<double>(now - g_last).count() - parts});
  g_last = now;
}

void mark_restart() {
  g_last = Clock::now();
  g_parts.clear();
}

Outcome internal(const Place& at, Results& out, const std::string& msg) {
  std::fprintf(stderr, "kforge-rank %d: %s\n", at.rank, msg.c_str());
  out.report.sandbox_errors.push_back(msg);
  return kInternal;
}

bool draw_secret(const Place& at, uint64_t* secret, std::string* err) {
  if (at.job.fixed_inputs()) {
    *secret = inputs::call_seed(at.job.seed(), 4, at.rank, 0);
    return true;
  }
  if (at.job_index > 0) return true;  // drawn once, for every job of the launch
  if (getrandom(secret, sizeof *secret, 0) != static_cast<ssize_t>(sizeof *secret)) {
    *err = std::string("getrandom: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool plan_heaps(Place& at, Device& dev, std::string* err) {
  dev.layouts.clear();
  dev.heap_bytes = 0;
  for (Job& job : at.jobs) {
    at.job = job;
    if (!plan_heap(at, &dev.layout, err)) {
      *err = job.dir + ": " + *err;
      return false;
    }
    job = at.job;  // with shapes given for every rank
    dev.layouts.push_back(dev.layout);
    dev.heap_bytes = std::max(dev.heap_bytes, dev.layout.total);
  }
  at.job = at.jobs[0];
  dev.layout = dev.layouts[0];
  return true;
}

Outcome bootstrap(Ctx& c) {
  const Job& job = c.at.job;
  if (job.settings.world != c.at.world)
    return internal(c.at, c.out,
                    fmt::format("job.json says world {} but mpirun started {} ranks",
                                job.settings.world, c.at.world));
  if (job.settings.world > kf::kMaxWorld)
    return internal(
        c.at, c.out,
        fmt::format("world {} exceeds kf::kMaxWorld ({})", job.settings.world, kf::kMaxWorld));
  c.dev.be =
      job.settings.backend == sandbox::Backend::host ? make_host_backend() : make_cuda_backend();
  std::string err;
  if (!plan_heaps(c.at, c.dev, &err)) return internal(c.at, c.out, err);
  BackendConfig cfg;
  cfg.rank = c.at.rank;
  cfg.world = c.at.world;
  cfg.local_rank = c.at.local_rank;
  cfg.local_size = c.at.local_size;
  cfg.heap_bytes = c.dev.heap_bytes;
  cfg.l2_flush_bytes = job.settings.l2_flush_bytes;
  cfg.shm_prefix = job.shm_prefix;
  // init is collective and agrees internally: every rank sees the same success.
  if (!c.dev.be->init(cfg, &err)) return internal(c.at, c.out, "heap set-up: " + err);
  mark(c.out, "context+heap");
  c.dev.heap_ready = true;
  c.out.report.device = c.dev.be->device();
  c.out.report.emulated = c.dev.be->emulated();
  c.libs.base_runs = !job.baseline_lib.empty() && c.dev.be->baseline_can_run();
  if (job.candidate_is_baseline && !c.dev.be->baseline_can_run())
    return internal(
        c.at, c.out,
        fmt::format("the NCCL baseline cannot run with {} ranks on {} GPU(s): NCCL refuses two "
                    "ranks on one GPU; run it with --world {} or less here",
                    c.at.local_size, c.dev.be->device_count(), c.dev.be->device_count()));
  if ((c.libs.base_runs || job.candidate_is_baseline) &&
      job.settings.backend == sandbox::Backend::cuda) {
    Outcome o =
        c.dev.be->init_nccl(&err) ? kOk : internal(c.at, c.out, "NCCL for the baseline: " + err);
    mark(c.out, "nccl");
    if ((o = agree(o)) != kOk) return o;
  }
  build_views(c.at, c.dev, c.args);
  return generator_selfcheck(c.at, c.dev, c.args, c.secret, &err)
             ? kOk
             : internal(c.at, c.out, "input generator: " + err);
}

namespace {

// Loads `path` into *lib. In the jobs after the first (and in every job of a warm set's
// later requests), a library this process loaded already is loaded from a copy in the
// job's folder: dlopen would hand back the same instance (it knows a file by its inode,
// and each eval's library is a hard link to the build cache's), with the static state the
// previous job left (the baseline's barrier counts, say), and a job must start as a
// launch of its own would.
bool load_fresh(const Place& at, Role who, const std::string& path, Lib* lib, std::string* err) {
  std::string from = path;
  if (at.job_index > 0 || at.request > 0) {
    // Ranks load their own.
    from = fmt::format("{}/{}-rank{}.so", at.job.dir, role_name(who), at.rank);
    std::error_code ec;
    std::filesystem::copy_file(path, from, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) {
      *err = "cannot copy " + path + " to " + from + ": " + ec.message();
      return false;
    }
  }
  bool ok = load_lib(who, from, lib, err);
  lib->path = path;
  return ok;
}

Outcome load(Ctx& c) {
  const Job& job = c.at.job;
  status_set(RankPhase::load, "", false, job.settings.limits.load_s);
  Outcome o = kOk;
  std::string err;
  if (job.candidate_is_baseline) {  // the problem's own baseline: trusted, in this process
    if (!load_fresh(c.at, Role::candidate, job.candidate_lib, &c.libs.cand, &err)) {
      add_failure(c.out, Status::load_error, Role::candidate, "load", err);
      o = kFailed;
    }
  } else {
    c.libs.cand.who = Role::candidate;
    c.libs.cand.path = job.candidate_lib;
    c.libs.cand.remote = true;
    std::string load_err;
    if (!start_runner(c.at, c.dev, c.libs.runner, &load_err, &err)) {
      o = internal(c.at, c.out, err);
    } else if (!c.libs.runner.loaded) {
      add_failure(c.out, Status::load_error, Role::candidate, "load", load_err);
      o = kFailed;
    }
  }
  if (!job.baseline_lib.empty()) {
    if (!load_fresh(c.at, Role::baseline, job.baseline_lib, &c.libs.base, &err)) {
      add_failure(c.out, Status::load_error, Role::baseline, "load", err);
      o = kFailed;
    }
  }
  if (!job.baseline_lib.empty() && !c.libs.base_runs)
    c.out.report.notes.push_back(fmt::format(
        "baseline not run: {} ranks share {} GPU(s) and NCCL refuses two ranks on one GPU",
        c.at.local_size, c.dev.be->device_count()));
  c.libs.use_oracle = job.reference != Reference::baseline || !c.libs.base_runs;
  if (job.reference == Reference::baseline && !c.libs.base_runs)
    c.out.report.notes.push_back(
        "reference: the baseline cannot run here, so expected outputs come from the oracle");
  // kforge built the problem's oracle from its folder into the launch's library folder.
  if (o == kOk && c.libs.use_oracle &&
      !c.libs.oracle.open(oracle_lib_beside(job.candidate_lib), &err))
    o = internal(c.at, c.out, "problem '" + job.settings.problem + "': " + err);
  c.out.report.reference_used = c.libs.use_oracle ? Reference::oracle : Reference::baseline;
  c.out.report.baseline_ran = c.libs.base_runs;
  return agree(o);
}

void fill_run_report(const Place& at, const Device& dev, Results& out) {
  RunReport& r = out.run;
  r.world = at.world;
  r.backend = at.job.settings.backend;
  r.emulated = dev.be && dev.be->emulated();
  r.device_name = dev.be ? dev.be->device_name() : "";
  r.devices = dev.be ? dev.be->device_count() : 0;
  if (r.emulated)
    r.notes.push_back(
        fmt::format("emulated: {} ranks share {} GPU(s); times are not a speed measurement",
                    at.local_size, r.devices));
  for (const auto& n : out.report.notes)
    if (n.rfind("baseline not run", 0) == 0 || n.rfind("reference:", 0) == 0) r.notes.push_back(n);
}

}  // namespace

void write_reports(const Place& at, const Device& dev, Results& out, bool with_result) {
  status_set(RankPhase::report, "", false, 30);
  std::string err;
  if (!write_json_file(at.job.dir + "/rank" + std::to_string(at.rank) + ".json", out.report, &err))
    std::fprintf(stderr, "kforge-rank %d: %s\n", at.rank, err.c_str());
  if (at.rank == 0 && with_result) {
    fill_run_report(at, dev, out);
    if (!write_json_file(at.job.dir + "/result.json", out.run, &err))
      std::fprintf(stderr, "kforge-rank 0: %s\n", err.c_str());
  }
}

// The teardown is the runners' exits and the heap released: so that the launch's seconds
// outside the ranks are mpirun's alone.
void record_teardown(const Place& at, const Device& dev, Results& out) {
  if (at.rank != 0 || !dev.be) return;
  mark(out, "teardown/heap");
  std::string err;
  if (!write_json_file(at.job.dir + "/result.json", out.run, &err))
    std::fprintf(stderr, "kforge-rank 0: %s\n", err.c_str());
}

namespace {

// Makes job i the current one: its status files, a fresh report, its heap layout and
// views, its runner, and a heap zeroed as at bootstrap (comm.alloc hands out zeroed
// memory; the previous job's or eval's flags must not carry over). Collective, except
// for the first job of a launch, which the bootstrap set up.
Outcome begin_job(Ctx& c, size_t i, const RankReport& boot) {
  c.at.job_index = i;
  c.at.job = c.at.jobs[i];
  if (!c.libs.runners.empty()) c.libs.runner = c.libs.runners[i];
  std::string err;
  if (i == 0 && c.at.request == 0) return kOk;
  // The previous job's runner must be gone first: its device memory (all of it, for a
  // candidate that takes every byte it can) is not this job's to lose.
  if (i > 0 && !c.libs.runners.empty()) stop_runner(c.libs.runners[i - 1]);
  if (!status_init(c.at.job.dir, c.at.rank, &err)) return internal(c.at, c.out, err);
  status_set(RankPhase::bootstrap, "next job", false, c.at.job.settings.limits.load_s);
  c.out.report = boot;
  if (i > 0) c.out.run = RunReport{};  // a request's first job keeps its request's phases
  c.libs.cand = Lib{};
  c.libs.base = Lib{};
  c.args.bump = Bump{};
  c.dev.layout = c.dev.layouts[i];
  Outcome o = kOk;
  if (!draw_secret(c.at, &c.secret, &err) ||
      !c.dev.be->zero(c.dev.be->base(c.at.rank), c.dev.heap_bytes, &err) ||
      !c.dev.be->synchronize(&err))
    o = internal(c.at, c.out, err);
  build_views(c.at, c.dev, c.args);
  o = agree(o);  // every rank's heap is clear before any candidate runs again
  mark(c.out, "next");
  return o;
}

// Load, set up, check and time the current job, each step agreed by every rank.
Outcome run_steps(Ctx& c) {
  Outcome o = load(c);
  mark(c.out, "load");
  if (o == kOk) {
    status_set(RankPhase::setup, "", false, c.at.job.settings.limits.setup_s);
    o = run_setups(c);
    mark(c.out, "setup");
  }
  if (o == kOk) {
    o = run_checks(c);
    mark(c.out, "check");
  }
  if (o == kOk && c.at.job.timed) {
    o = run_timing(c);
    mark(c.out, "time");
  }
  return o;
}

}  // namespace

Outcome spawn_runners(Ctx& c) {
  if (c.at.job.candidate_is_baseline) return kOk;
  std::string err;
  c.libs.runners.resize(c.at.jobs.size());
  for (RunnerLink& l : c.libs.runners) {
    if (take_spare(c.libs.spares, &l)) continue;
    if (!spawn_runner(c.at, &l, &err)) return internal(c.at, c.out, err);
  }
  c.libs.runner = c.libs.runners[0];
  return kOk;
}

Outcome run_launch_jobs(Ctx& c, Outcome o, bool go, const RankReport& boot) {
  bool reported = !go;
  for (size_t i = 0; go && o == kOk && i < c.at.jobs.size(); ++i) {
    o = begin_job(c, i, boot);
    if (o == kOk) o = run_steps(c);
    if (o == kFatal) {
      // A runner's death by a signal is told by the crash file alone (no report), as a
      // rank's own would be.
      if (!c.out.crashed) write_reports(c.at, c.dev, c.out, false);
      std::fprintf(stderr, "kforge-rank %d: %s; aborting the job\n", c.at.rank,
                   c.out.crashed ? "the candidate's process died by a signal"
                                 : c.out.report.failures.back().message.c_str());
      MPI_Abort(MPI_COMM_WORLD, 3);
      _exit(3);
    }
    quit_runner(c.libs.runner);  // it ends while the reports are written
    if (!c.libs.runners.empty()) c.libs.runners[i] = c.libs.runner;
    write_reports(c.at, c.dev, c.out, c.dev.be != nullptr);
    reported = true;
  }
  if (!reported)  // the bootstrap failed: the first job's
    write_reports(c.at, c.dev, c.out, c.dev.be != nullptr);
  return o;
}

}  // namespace sandbox::rank
