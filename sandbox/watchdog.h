// sandbox/watchdog.h: the launch's watchdog, run every ~100 ms as mpirun's poll callback.
// It reads every rank's status file in the folder of the job that rank is on (the last
// of the launch's jobs where the rank has one) and decides whether to kill the launch:
// a rank overstaying its phase, a rank that never wrote a status file, the launch past
// its total limit, or every rank done while something the candidate started holds the
// launch open.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "run_result.h"

namespace sandbox {

// How long after every rank said "done" the launch may take to end (MPI_Finalize,
// mpirun's teardown: well under a second when nothing holds it).
constexpr double kLingerS = 3.0;

struct Watchdog {
  std::vector<std::string> dirs;  // the jobs' folders, in launch order
  int world = 1;
  double bootstrap_s = 0;      // a rank with no status file after this long is stuck
  double total_s = 0;          // the launch's limit (0: none)
  std::string binary_name;     // kforge-rank: a pid is killed only when it still runs it
  bool kill_ranks = true;      // false when the pids in status files are not ours (bwrap)
  RunResult* out = nullptr;    // gets stuck, limit_s, lingering
  double linger_s = kLingerS;  // longer under a tool that writes its report after the ranks

  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_check = t0 - std::chrono::seconds(1);

  // True (with *reason) when the launch must be killed; the stuck ranks are killed here.
  bool operator()(std::string* reason);
};

// The index in `dirs` of the job rank `r` is on (-1: no status file yet).
int current_job(const std::vector<std::string>& dirs, int r);

// True when pid is (still) one of our ranks: a pid from a status file may have been
// reused by now, and killing a stranger is worse than missing a corpse.
bool is_rank_process(int pid, const std::string& binary_name);

// SIGKILL to the rank and, when it leads one, its process group.
void kill_rank(int pid);

}  // namespace sandbox
