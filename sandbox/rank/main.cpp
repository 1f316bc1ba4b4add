// sandbox/rank/main.cpp: kforge-rank <dir>/job.json [<dir2>/job.json ...], the program
// mpirun starts on every rank. Steps 2-4 of DESIGN.md "The sandbox": bootstrap (MPI, the
// symmetric heap, NCCL) once, hardening, then for each job in order (the small check,
// then the full check and timing) load, setup, check, time and report into that job's
// folder, stopping after the first job that does not pass. Every collective step ends in
// an agreement on the worst outcome, so all ranks take the same path to the report.
//
// Exit status (of the last job run): 0 everything passed; 1 a failure of the candidate or
// baseline (in rank<R>.json); 2 the sandbox itself failed (bad job, no oracle, heap
// set-up: see the notes and stderr); a CUDA error that leaves the context unusable is a
// crash in rank<R>.json followed by MPI_Abort (status 3).
#include <fmt/format.h>
#include <mpi.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "build_gate.h"
#include "check.h"
#include "context.h"
#include "data.h"
#include "harden.h"
#include "jobs.h"
#include "reaper.h"
#include "runner_link.h"
#include "setup.h"
#include "status.h"
#include "timing.h"

namespace sandbox::rank {
namespace {

using Clock = std::chrono::steady_clock;
Clock::time_point g_start;  // set first thing in main, before MPI_Init

// Records the seconds since the previous mark as phase `name` (rank 0 reports them).
void mark(Results& out, const char* name) {
  static Clock::time_point last = g_start;
  Clock::time_point now = Clock::now();
  out.run.phase_s.push_back({name, std::chrono::duration<double>(now - last).count()});
  last = now;
}

Outcome internal(const Place& at, Results& out, const std::string& msg) {
  std::fprintf(stderr, "kforge-rank %d: %s\n", at.rank, msg.c_str());
  out.report.sandbox_errors.push_back(msg);
  return kInternal;
}

// This rank's input secret into *secret, before any candidate code is loaded.
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

// Every job's heap layout; the heap is sized for the largest.
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

// Loads `path` into *lib. In the jobs after the first, a library this process loaded
// already is loaded from a copy in the job's folder: dlopen would hand back the same
// instance, with the static state the previous job left (the baseline's barrier counts,
// say), and a job must start as a launch of its own would.
bool load_fresh(const Place& at, Role who, const std::string& path, Lib* lib, std::string* err) {
  std::string from = path;
  if (at.job_index > 0) {
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

// Rank 0 adds the teardown (the runners' exits, the heap released) to the last
// job's result.json, so that the launch's seconds outside the ranks are mpirun's alone.
void record_teardown(const Place& at, const Device& dev, Results& out) {
  if (at.rank != 0 || !dev.be) return;
  mark(out, "teardown/heap");
  std::string err;
  if (!write_json_file(at.job.dir + "/result.json", out.run, &err))
    std::fprintf(stderr, "kforge-rank 0: %s\n", err.c_str());
}

// Makes job i the current one: its status files, a fresh report, its heap layout and
// views, its runner, and a heap zeroed as at bootstrap (comm.alloc hands out zeroed
// memory; the previous job's flags must not carry over). Collective for i > 0.
Outcome begin_job(Ctx& c, size_t i, const RankReport& boot) {
  c.at.job_index = i;
  c.at.job = c.at.jobs[i];
  if (!c.libs.runners.empty()) c.libs.runner = c.libs.runners[i];
  std::string err;
  if (i == 0) return kOk;  // bootstrap set everything up for the first job
  // The previous job's runner must be gone first: its device memory (all of it, for a
  // candidate that takes every byte it can) is not this job's to lose.
  if (!c.libs.runners.empty()) stop_runner(c.libs.runners[i - 1]);
  if (!status_init(c.at.job.dir, c.at.rank, &err)) return internal(c.at, c.out, err);
  status_set(RankPhase::bootstrap, "next job", false, c.at.job.settings.limits.load_s);
  c.out.report = boot;
  c.out.run = RunReport{};
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

// Starts one runner per job; the candidate's processes first: their CUDA contexts start
// while this one's does.
Outcome spawn_runners(Ctx& c) {
  if (c.at.job.candidate_is_baseline) return kOk;
  std::string err;
  c.libs.runners.resize(c.at.jobs.size());
  for (RunnerLink& l : c.libs.runners)
    if (!spawn_runner(c.at, &l, &err)) return internal(c.at, c.out, err);
  c.libs.runner = c.libs.runners[0];
  return kOk;
}

int run(int argc, char** argv) {
  Ctx c;
  MPI_Comm_rank(MPI_COMM_WORLD, &c.at.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.at.world);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &c.at.local_rank);
  MPI_Comm_size(local, &c.at.local_size);
  MPI_Comm_free(&local);
  c.out.report.rank = c.at.rank;
  c.out.report.pid = getpid();
  mark(c.out, "mpi_init");
  if (argc < 2) {
    if (c.at.rank == 0)
      std::fprintf(stderr, "usage: kforge-rank <dir>/job.json [<dir2>/job.json ...]\n");
    return 2;
  }
  std::string err;
  bool job_ok = read_jobs(argc, argv, &c.at.jobs, &err);
  if (job_ok) c.at.job = c.at.jobs[0];
  if (!status_init(job_ok ? c.at.job.dir : dirname_of(argv[1]), c.at.rank, &err)) job_ok = false;
  install_crash_handlers();
  status_set(RankPhase::bootstrap, "", false, c.at.job.settings.limits.bootstrap_s);
  if (!job_ok || !draw_secret(c.at, &c.secret, &err)) {
    std::fprintf(stderr, "kforge-rank %d: %s\n", c.at.rank, err.c_str());
    return 2;
  }
  Outcome o = agree(spawn_runners(c));
  if (o == kOk) o = agree(bootstrap(c));
  mark(c.out, "bootstrap");
  if (o == kOk) harden(c.at.jobs, &c.out.report.isolation);
  // The build went on meanwhile (build_gate.h); a failed one ends the job unreported.
  const bool go = o != kOk || agree(wait_for_build(c.at.jobs[0]) ? kOk : kFailed) == kOk;
  mark(c.out, "build wait");
  const RankReport boot = c.out.report;
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
      return 3;
    }
    quit_runner(c.libs.runner);  // it ends while the reports are written
    if (!c.libs.runners.empty()) c.libs.runners[i] = c.libs.runner;
    write_reports(c.at, c.dev, c.out, c.dev.be != nullptr);
    reported = true;
  }
  if (!reported)
    write_reports(c.at, c.dev, c.out,
                  c.dev.be != nullptr);                 // the bootstrap failed: the first job's
  for (RunnerLink& l : c.libs.runners) stop_runner(l);  // before the heaps go: they map them
  mark(c.out, "teardown/runners");
  if (c.dev.heap_ready) c.dev.be->shutdown();
  record_teardown(c.at, c.dev, c.out);
  status_set(RankPhase::done, "", false, 0);
  return o == kOk ? 0 : o == kFailed ? 1 : 2;
}

}  // namespace
}  // namespace sandbox::rank

int main(int argc, char** argv) {
  sandbox::rank::g_start = sandbox::rank::Clock::now();
  // From here on this is the rank; the process mpirun started waits for it and records how
  // it ended (reaper.h).
  sandbox::rank::fork_reaper(argc, argv);
  MPI_Init(&argc, &argv);
  // Die with the launcher: an orphaned rank spinning on a GPU would hold it forever.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  int rc = 2;
  try {
    rc = sandbox::rank::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kforge-rank: internal error: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  // No static destructors beside the threads NCCL still runs (its communicator is left
  // to the exit: backend_cuda.cu); everything this process wrote is closed already.
  std::fflush(nullptr);
  _exit(rc);
}
