// sandbox/rank/context.h: the state one rank carries through its phases, in parts by the
// phase that fills them.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "bump.h"
#include "job.h"
#include "layout.h"
#include "lib.h"
#include "oracle.h"
#include "runner_link.h"

namespace sandbox::rank {

// The outcome of a step, agreed by all ranks (the worst wins): every rank then takes
// the same path, so no rank waits in a collective that another has skipped.
enum Outcome : int {
  kOk = 0,
  kFailed = 1,    // a failure of the candidate or baseline, recorded in report.failures
  kInternal = 2,  // the sandbox itself failed (bad job, oracle error): exit code 2
  kFatal = 3,     // the GPU context is unusable: write the report, MPI_Abort
};

// Expected or read-back outputs, by tensor name, decoded to doubles.
using Values = std::map<std::string, std::vector<double>>;

// The parts of a rank's state, by the phase that fills them. A helper takes the parts it
// reads or writes (const where it only reads); a phase that orchestrates several takes the
// whole Ctx. Device::be is a pointer: a const Device& still drives the backend, and says
// only that the part's fields stay as they are.

// Where this rank stands (bootstrap): the launch's jobs, the current one, and this rank's
// place in the world.
struct Place {
  // Every job of this launch (the small check, then the full check and timing: one
  // bootstrap for all), and the one being run.
  std::vector<Job> jobs;
  size_t job_index = 0;
  // Serve mode (rank/serve.h): which request of the warm set these jobs are (0: the
  // jobs on the command line, which the bootstrap set up).
  size_t request = 0;
  Job job;
  int rank = 0, world = 1, local_rank = 0, local_size = 1;

  const JobTensor& jt(size_t i) const { return job.tensors[i]; }
  const std::vector<int64_t>& shape(size_t i, int r) const {
    return job.tensors[i].shape_by_rank[r];
  }
};

// The backend and the symmetric heap (bootstrap, then each job's layout).
struct Device {
  std::unique_ptr<Backend> be;
  bool heap_ready = false;          // be->init succeeded on every rank
  HeapLayout layout;                // the current job's
  std::vector<HeapLayout> layouts;  // every job's
  size_t heap_bytes = 0;            // the heap: the largest layout's total
};

// The libraries of the current job (load) and where the candidate runs.
struct Libraries {
  Lib cand, base;
  bool base_runs = false;  // a baseline library was given and can run here
  bool use_oracle = true;  // expected outputs come from the oracle (else the baseline)
  Oracle oracle;           // the problem's oracle library (oracle_lib_beside), loaded in load()
  RunnerLink runner;       // the candidate's process (rank/runner_link.h)
  // One runner per job, all started before bootstrap (a fresh process per job keeps a
  // candidate's static state from one job to the next); runner is the current job's.
  std::vector<RunnerLink> runners;
  // Serve mode (rank/serve.h): runners started when a request ends, for the next one, so
  // that their start (a process, a device context: about 0.25 s on an H100) happens
  // while the set waits rather than in the next eval. Nothing of a candidate's exists
  // in them until a job's start_runner; each still serves one job only.
  std::vector<RunnerLink> spares;
};

// What a call receives (built by rank/setup.h build_views), and how the next one is made.
struct CallArgs {
  std::deque<std::string> strings;   // storage behind every const char* handed out
  std::vector<kf::Tensor> pristine;  // this rank's tensors, as handed to each call
  std::vector<kf::Param> params;
  std::vector<kf::Tensor> items;  // the copy a call receives (it may scribble on it)
  kf::Tensors tensors{};
  kf::Comm comm_cand{}, comm_base{};  // pristine Comms: the candidate's has nccl_ null
  kf::Comm comm_call{};               // the copy a call receives
  // comm.alloc's workspace, which both Comms' ops.ctx point at. Owner: the Backend
  // (comm.barrier synchronizes it first).
  Bump bump;
  // The call being made is the one a profile is of (job.h `profile`): inside the NVTX
  // range kf_profile (rank/profile_range.h), in this process or the runner.
  bool profile_call = false;
  // The next candidate call, in its runner: the first read of a peer's input stalls this
  // long (the race pass's exit probe, rank/check.cpp).
  double stall_ms = 0;
};

// What this rank reports: rank<R>.json, and rank 0 result.json.
struct Results {
  RankReport report;
  RunReport run;         // rank 0 only
  bool crashed = false;  // the runner died by a signal: the crash file tells it
};

struct Ctx {
  Place at;
  Device dev;
  Libraries libs;
  CallArgs args;
  Results out;
  // The base of this rank's input seeds: drawn by this rank alone (job.fixed_inputs:
  // from job.seed), never sent to another (rank/data.h gather_inputs). In no part, so
  // that only a function handed it explicitly sees it: none of the runner's.
  uint64_t secret = 0;
};

// Agrees on the worst outcome across ranks (collective).
Outcome agree(Outcome mine);

// Records a failure of `who` in this rank's report.
Failure& add_failure(Results& out, Status kind, Role who, const std::string& phase,
                     const std::string& message);

}  // namespace sandbox::rank
