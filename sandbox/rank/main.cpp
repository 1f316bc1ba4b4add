// sandbox/rank/main.cpp: kforge-rank <dir>/job.json [<dir2>/job.json ...], the program
// mpirun starts on every rank. Steps 2-4 of DESIGN.md "The sandbox": bootstrap (MPI, the
// symmetric heap, NCCL) once, hardening, then for each job in order (the small check,
// then the full check and timing) load, setup, check, time and report into that job's
// folder, stopping after the first job that does not pass (rank/steps.h). Every collective
// step ends in an agreement on the worst outcome, so all ranks take the same path to the
// report. `kforge-rank --serve <root>/ctl <job.json>...` then stays for later requests
// (rank/serve.h: warm ranks).
//
// Exit status (of the last job run): 0 everything passed; 1 a failure of the candidate or
// baseline (in rank<R>.json); 2 the sandbox itself failed (bad job, no oracle, heap
// set-up: see the notes and stderr); a CUDA error that leaves the context unusable is a
// crash in rank<R>.json followed by MPI_Abort (status 3).
#include <malloc.h>
#include <mpi.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "build_gate.h"
#include "harden.h"
#include "jobs.h"
#include "reaper.h"
#include "serve.h"
#include "spawner.h"
#include "status.h"
#include "steps.h"

namespace sandbox::rank {
namespace {

int run(int argc, char** argv, const std::string& ctl) {
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
      std::fprintf(
          stderr, "usage: kforge-rank [--serve <root>/ctl] <dir>/job.json [<dir2>/job.json ...]\n");
    return 2;
  }
  std::string err;
  bool job_ok = read_jobs(argc, argv, &c.at.jobs, &err);
  if (job_ok) c.at.job = c.at.jobs[0];
  if (!status_init(job_ok ? c.at.job.dir : dirname_of(argv[1]), c.at.rank, &err)) job_ok = false;
  install_crash_handlers();
  if (!ctl.empty()) watch_kforge(ctl);
  status_set(RankPhase::bootstrap, "", false, c.at.job.settings.limits.bootstrap_s);
  if (!job_ok || !draw_secret(c.at, &c.secret, &err)) {
    std::fprintf(stderr, "kforge-rank %d: %s\n", c.at.rank, err.c_str());
    return 2;
  }
  Outcome o = agree(spawn_runners(c));
  if (o == kOk) o = agree(bootstrap(c));
  mark(c.out, "bootstrap");
  if (o == kOk) harden(c.at.jobs, serve_root(ctl), &c.out.report.isolation);
  // The build went on meanwhile (build_gate.h); a failed one ends the job unreported.
  const bool go = o != kOk || agree(wait_for_build(c.at.jobs[0]) ? kOk : kFailed) == kOk;
  mark(c.out, "build wait");
  const RankReport boot = c.out.report;
  o = run_launch_jobs(c, o, go, boot);
  if (!ctl.empty()) o = serve(c, ctl, o, boot);
  for (RunnerLink& l : c.libs.runners) stop_runner(l);  // before the heaps go: they map them
  for (RunnerLink& l : c.libs.spares) stop_runner(l);
  mark(c.out, "teardown/runners");
  if (c.dev.heap_ready) c.dev.be->shutdown();
  // A warm set's last eval was read already: its result.json stays as it was.
  if (ctl.empty()) record_teardown(c.at, c.dev, c.out);
  status_set(RankPhase::done, "", false, 0);
  return o == kOk ? 0 : o == kFailed ? 1 : 2;
}

}  // namespace
}  // namespace sandbox::rank

int main(int argc, char** argv) {
  sandbox::rank::set_start(std::chrono::steady_clock::now());
  // A check reads every output back into fresh buffers of megabytes, call after call.
  // glibc maps each such buffer from the kernel and unmaps it when freed, so each call
  // paid its page faults again; kept in the heap below these sizes, they are reused
  // (bench/check_cost.sh: the read-backs' part of a check).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  // From here on this is the rank; the process mpirun started waits for it and records how
  // it ended (reaper.h).
  sandbox::rank::fork_reaper(argc, argv);
  std::string ctl;
  if (argc > 2 && std::strcmp(argv[1], "--serve") == 0) {
    ctl = argv[2];
    // Before MPI and before any secret: the helper that starts later runners (spawner.h).
    std::string err;
    if (!sandbox::rank::start_spawner(&err)) {
      std::fprintf(stderr, "kforge-rank: %s\n", err.c_str());
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  // Die with the launcher: an orphaned rank spinning on a GPU would hold it forever.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  int rc = 2;
  try {
    // argv[0] stays a name, argv[1] the first job.
    const int skip = ctl.empty() ? 0 : 2;
    rc = sandbox::rank::run(argc - skip, argv + skip, ctl);
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
