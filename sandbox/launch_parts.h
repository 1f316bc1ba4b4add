// sandbox/launch_parts.h: the parts of a launch (launch.cpp) that a warm set (warm.cpp)
// takes too: the jobs' folders, the jail, where OpenMPI's segments go, and what the ranks
// left behind. Internal to sandbox/.
#pragma once

#include <string>
#include <vector>

#include "confine.h"
#include "launch.h"
#include "watchdog.h"

namespace sandbox::detail {

// Checks the jobs and makes their folders (status/, scratch/, job.json).
bool prepare_jobs(const std::vector<Job>& jobs, const LaunchOptions& opt, std::string* err);

// What the ranks left in one job's folder; the pids they named go into *pids.
void collect(const Job& job, RunResult* out, std::vector<int>* pids);

// How each rank's process ended, from the records its reaper left in <dir>/status
// (rank/reaper.h).
void collect_exits(const std::string& dir, int world, RunResult* out);

// Where OpenMPI's shared-memory segments go (into o's MCA parameters); the name prefix
// to clean up afterwards ("" for none).
std::string place_mpi_segments(const Job& job, bool private_shm, LaunchOptions* o);

// Waits for the ranks the watchdog killed: one killed inside a kernel exits only once the
// driver has torn its GPU context down, which can take seconds, and the next job should
// not start beside it. A note in *last when one is still exiting after 15 s.
void wait_killed(const ProcessResult& pr, RunResult* last);

// How mpirun ended (its exit, the watchdog's kill) and what the confinement found left
// over (leftover processes, the OOM killer), into *last.
void record_end(const ProcessResult& pr, const ConfinedRun& cr, RunResult* last);

// No rank may outlive its launch, nor its POSIX shared memory.
void clean_up(const std::vector<int>& pids, const std::string& binary_name,
              const std::string& shm_name, std::vector<std::string>* notes);

// The process spec of the launch, confined (confine.h). A warm set names its `root`:
// bound writable whole (its later evals' folders will be there), instead of the jobs'
// folders and libraries.
bool launch_spec(const std::vector<Job>& jobs, const LaunchOptions& o, Watchdog* dog,
                 ProcessSpec* spec, Confined* confined, std::string* err, const std::string& root);

// One result per job the ranks reached, in order, into *out: `last` (what mpirun and the
// watchdog did) for the last of them; the ranks' ends from exits_dir ("" for none: they
// are still running); the pids the ranks named into *pids.
void gather(const std::vector<Job>& jobs, const RunResult& last, const LaunchOptions& opt,
            const std::string& isolation, const std::string& exits_dir, std::vector<RunResult>* out,
            std::vector<int>* pids);

}  // namespace sandbox::detail
