// sandbox/launch.h: one job on all its ranks (DESIGN.md "The sandbox", steps 2 and 5):
// job.json into the run directory, `mpirun ... kforge-rank <dir>/job.json` with a
// scrubbed environment, and a watchdog that reads the ranks' status files and kills
// the whole job (mpirun's group and every rank, each in a group of its own) when a rank
// overstays its phase, never reports, or the job runs past its total limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "job.h"
#include "run_result.h"

namespace sandbox {

struct LaunchOptions {
  std::string mpirun = "mpirun";
  std::string rank_binary;  // the kforge-rank executable (absolute)
  // Its arguments before the job files (a warm set's `--serve <root>/ctl`: warm.h).
  std::vector<std::string> rank_args;
  // MCA parameters: measured on OpenMPI 4.1 in a container, these start 2 ranks in
  // about 0.4 s instead of 0.7 s and print nothing: shared memory and self only, no
  // CMA single-copy (needs ptrace rights a container may lack), no UCX/OFI probing.
  std::vector<std::pair<std::string, std::string>> mca = {
      {"btl", "self,vader"},
      {"btl_vader_single_copy_mechanism", "none"},
      {"pml", "ob1"},
      {"mtl", "^ofi"},
      {"osc", "^ucx"}};
  std::vector<std::string> extra_args;  // more mpirun arguments (a host file, ...)
  std::vector<std::string> extra_env;   // "K=V" set after scrubbing (e.g. CUDA_VISIBLE_DEVICES)
  bool allow_multicast = false;         // else NCCL_NVLS_ENABLE=0 and friends are forced
  double slack_s = 10;                  // past limits.total_s, the hard stop of mpirun
  size_t output_cap = 1 << 20;
  // The whole job's memory (mpirun and every rank, host memory only) and process count:
  // past them the job ends as a crash that says so (confine.h). KFORGE_MEMORY_MIB sets
  // the first.
  uint64_t memory_bytes = default_job_memory();
  int max_pids = 4096;  // threads count: a CUDA rank has dozens
  static uint64_t default_job_memory();
  // A program every rank runs under (Nsight Compute, compute-sanitizer: src/eval/
  // profile.h): its command line up to the rank program, which follows it. Only the
  // ranks in wrapped_ranks (all when empty) run under it; the others start as always.
  std::vector<std::string> rank_wrapper;
  std::vector<int> wrapped_ranks;
  std::vector<std::string> read_only;  // more paths the sandbox shows (the tool's folder)
  // How long the launch may stay up after every rank is done (0: the watchdog's own,
  // kLingerS): a tool writes its report then.
  double linger_s = 0;
};

// Runs the job in job.dir (created, with status/ and scratch/). False (with *err) only
// when it could not be started; everything the ranks did is in *out.
bool run_job(const Job& job, const LaunchOptions& opt, RunResult* out, std::string* err);

// Runs several jobs of one world in one launch: the ranks bootstrap once, then run each
// job in order into its own folder and stop after the first that does not pass (see
// rank/main.cpp). *out gets one result per job the ranks reached, in order; what mpirun
// and the watchdog did (exit status, kill, output) belongs to the last of them, and the
// ones before it passed (exit status 0). Every job's limits apply to its own phases; the
// launch's total limit is the sum of theirs.
bool run_jobs(const std::vector<Job>& jobs, const LaunchOptions& opt, std::vector<RunResult>* out,
              std::string* err);

// The environment the ranks get: only the names listed in DESIGN.md "Policies" pass
// through from this process, never one that looks like a secret; HOME and TMPDIR point
// into scratch_dir; NVLink multicast is forced off unless allowed.
std::vector<std::string> scrubbed_env(const std::string& scratch_dir, bool allow_multicast,
                                      const std::vector<std::string>& extra_env);

// The mpirun command line for a launch of `jobs` (without running it).
std::vector<std::string> mpirun_argv(const std::vector<Job>& jobs, const LaunchOptions& opt);

}  // namespace sandbox
