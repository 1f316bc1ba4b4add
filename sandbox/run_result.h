// sandbox/run_result.h: what one launch of the ranks left behind, as the host side reads
// it: every rank's status file, report, crash and exit record, and what mpirun and the
// watchdog did. Its own header so that the launch (launch.h) and its watchdog
// (watchdog.h) both use it without including each other.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "job.h"
#include "rank_status.h"

namespace sandbox {

// A rank's last status file (status/rank<R>): the line the rank wrote, and what the host
// side knows of it.
struct RankStatus : RankStatusLine {
  int rank = 0;
  bool present = false;  // the file existed and read as a status line
  double seconds = 0;    // in its phase (window) when last looked at
};

struct RunResult {
  int exit_code = -1;  // mpirun's
  int signal = 0;
  bool killed_by_watchdog = false;
  // Every rank had finished, but the job did not end: a process the candidate started
  // held it open (mpirun waits for its output). Killed; the ranks' reports stand.
  bool lingering = false;
  std::string kill_reason;           // "rank 1 stuck in check (trial 0 call 0) for 10.2 s ..."
  std::vector<RankStatus> stuck;     // the ranks that made the watchdog kill
  double limit_s = 0;                // the limit they overran
  std::vector<RankStatus> statuses;  // every rank's last status (present or not)
  std::vector<std::pair<int, std::string>> crashes;  // (rank, status/rank<R>.crash text)
  std::vector<std::optional<RankReport>> reports;    // rank<R>.json, by rank
  // How each rank's process ended (status/rank<R>.exit, by rank): none when the record is
  // missing (the process that keeps it was killed too, or the job never started it).
  std::vector<std::optional<RankExit>> exits;
  std::optional<RunReport> result;  // result.json
  std::vector<std::string> notes;   // e.g. a rank found alive after the job, and killed
  bool oom_killed = false;          // the job's memory limit was hit (confine.h)
  uint64_t memory_bytes = 0;        // that limit
  std::string isolation;            // how the job was confined, for the record
  std::string output;               // mpirun's output (head and tail)
  double seconds = 0;
};

// The wall clock in ms since the epoch: the clock of the status files' since_ms.
long long wall_clock_ms();

// Reads status/rank<R> of a run directory; `present` false when there is none.
RankStatus read_rank_status(const std::string& dir, int rank);

}  // namespace sandbox
