// sandbox/rank/steps.h: the steps a rank takes for the jobs of one launch (rank/main.cpp)
// or of one request to a warm set (rank/serve.h): bootstrap once, then per job load,
// setup, check, time and report. Every collective step ends in an agreement on the worst
// outcome (context.h agree), so all ranks take the same path to the report.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "context.h"

namespace sandbox::rank {

// Set first thing in main, before MPI_Init: the clock of the first phase.
void set_start(std::chrono::steady_clock::time_point t0);

// Records the seconds since the previous mark as phase `name` (rank 0 reports them).
void mark(Results& out, const char* name);

// The next mark counts from now (a warm rank's request: its idle wait is no phase).
void mark_restart();

// Times a part of the current step while it lives (the candidate's calls, the baseline's,
// the inputs, the outputs' checks, the audit): the next mark(out, name) records each part
// as phase "name/part" and only what is left as "name", so that a verdict's seconds say
// where a check or a timing phase goes and still add up to the eval's. A clock inside
// another counts for the outer one's part.
class PartClock {
 public:
  explicit PartClock(const char* part);
  ~PartClock();
  PartClock(const PartClock&) = delete;
  PartClock& operator=(const PartClock&) = delete;

 private:
  const char* part_;  // null inside another clock
  std::chrono::steady_clock::time_point t0_;
};

// Says msg on stderr and in the report's sandbox errors: kInternal.
Outcome internal(const Place& at, Results& out, const std::string& msg);

// This rank's input secret into *secret, before any candidate code is loaded: drawn
// afresh for the first job of a launch or request, kept for the jobs after it.
bool draw_secret(const Place& at, uint64_t* secret, std::string* err);

// Every job's heap layout into dev; dev.heap_bytes becomes the largest.
bool plan_heaps(Place& at, Device& dev, std::string* err);

// MPI is up: the backend, the heap, NCCL for the baseline, the input generator's check.
Outcome bootstrap(Ctx& c);

// Starts one runner per job (the candidate's processes: their CUDA contexts start while
// this one's does).
Outcome spawn_runners(Ctx& c);

// Writes this rank's report into the current job's folder (and rank 0's result.json).
void write_reports(const Place& at, const Device& dev, Results& out, bool with_result);

// Rank 0 adds the teardown to the last job's result.json.
void record_teardown(const Place& at, const Device& dev, Results& out);

// Runs the jobs of c.at.jobs in order, once the build gate said `go`, from outcome `o`
// (the bootstrap's), stopping after the first that does not pass, and writes the reports
// of each job reached. A fatal outcome aborts the launch (MPI_Abort): it never returns.
Outcome run_launch_jobs(Ctx& c, Outcome o, bool go, const RankReport& boot);

}  // namespace sandbox::rank
