// sandbox/rank/runner_link.h: the judge's side of its runner (rank/runner_proto.h).
//
// Timing. The runner times a call with the same events as the judge times the baseline,
// but the runner is the candidate's process, so its figure is only a claim. The judge
// times the round trip itself (request sent to reply received, the runner's device
// synchronize included) and calibrates it on empty calls: an honest reply's time is the
// round trip less an overhead that varies little (median o_med, high o_hi). A claim
// within [round trip - o_hi, round trip] stands; any other is replaced by round trip -
// o_med and counted as unconfirmed. A forged claim thus gains at most o_hi - o_med (the
// margin, in the verdict), and a reply sent before the work is done is caught by the
// outputs, which the judge reads after the reply, on samples the candidate cannot
// predict.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend.h"
#include "runner_proto.h"

namespace sandbox::rank {

struct Ctx;

struct RunnerLink {
  pid_t pid = -1;
  int fd = -1;
  uint32_t seq = 0;
  double o_med_ms = 0, o_hi_ms = 0;  // the round trip's calibrated overhead
  double slack_ms = 0;               // the runner timer's off-stream slack
  bool calibrated = false;
  bool loaded = false;  // the runner loaded the candidate
  // How long the judge polls for a reply before it sleeps: on the GPU, where a core per
  // rank is there to spare, so the round trip is not late by a wake-up; 0 on the host
  // backend, where the judges would take the candidates' cores (and times mean nothing).
  double spin_ms = 0;
};

// Starts this rank's runner (before anything secret exists in this process, and before
// the seccomp filter forbids it). False with *err when it cannot be started.
bool spawn_runner(Ctx& c, std::string* err);

// Sends the heaps and the tensors, calibrates the round trip (when the job is timed),
// then has the runner load the candidate. False with *err when the runner failed (the
// sandbox's fault); a load error of the candidate's is *load_err, with true.
bool start_runner(Ctx& c, std::string* load_err, std::string* err);

// Calibrates the round trip on 32 empty calls (the timing phase needs it).
bool calibrate_runner(Ctx& c, std::string* err);

// The margins from the calibration's overheads (round trip less the runner's time):
// o_med their median, o_hi their 90th percentile plus twice the p10-p90 spread (at
// least 5 us).
void set_overheads(RunnerLink* l, std::vector<double> overheads_ms);

// How one request ended.
struct RunnerCall {
  bool replied = false;  // false: the runner died, or said what it was not asked
  runner::Reply reply;
  double round_trip_ms = 0;
  std::string death;  // when !replied: how the runner ended, for the failure's message
  int signal = 0;     // ... killed by this signal
  std::string note;   // ... and what its crash handler added (a missing tensor's name)
};

// Sends `q` and waits for its reply, serving comm.barrier's requests meanwhile.
RunnerCall call_runner(Ctx& c, runner::Request q);

// The time of record of a timed call from its reply (runner_link.h's rule above).
Timed judge_time(const RunnerLink& l, const RunnerCall& rc);

// Asks the runner to quit and reaps it (SIGKILL after 5 s).
void stop_runner(Ctx& c);

}  // namespace sandbox::rank
