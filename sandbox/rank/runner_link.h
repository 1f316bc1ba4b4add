// sandbox/rank/runner_link.h: the judge's side of its runner (rank/runner_proto.h).
//
// Timing. The runner times a call with the same events as the judge times the baseline,
// but the runner is the candidate's process, so its figure is only a claim. The judge
// times each round trip itself (request sent to reply received) and calibrates the
// overhead of an empty call before the candidate is loaded: on the H200 about 160 us,
// mostly the device switching between the two processes' contexts, and it varies by tens
// of microseconds from call to call. One sample cannot be judged against that noise; the
// median can: when the claims' median overhead exceeds the calibrated one by more than
// the limit (twice the calibration's p10-p90 spread, at least 20 us), every claim is
// refuted and each sample is timed as its round trip less the calibrated overhead
// (time_unconfirmed). A forger can thus take off at most the limit per call unnoticed
// (timer_margin_ms in the verdict). A reply sent before the work is done is caught by the
// outputs, which the judge reads after the reply, on samples the candidate cannot
// predict, and by the next reply arriving out of sequence.
//
// The audit. That margin is the whole time of a 20 us kernel, so after the samples the
// judges time `calls` back-to-back calls per request (fresh inputs, L2 flushed, outputs
// verified) by their own clocks: (round trip - calibrated overhead) / calls, whose noise
// is the overhead's spread over `calls`, chosen so that it stays under the bound
// max(3%, 0.5 us). The slowest rank's audited time is held against the median of all
// claims (not only the audit's own, so a candidate that is honest only in batches it
// recognises gains nothing): a median below it by more than the bound is refuted and
// every claim below the audited time is raised to it; a claim below it by more than the
// bound is raised even when the median stands. Back-to-back calls overlap their launch
// latency and keep small inputs in L2, so the audited time is at most the isolated one:
// an honest claim stands, a forged one can sit at most the bound below it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend.h"
#include "job.h"
#include "runner_proto.h"

namespace sandbox::rank {

struct Device;
struct Place;

struct RunnerLink {
  pid_t pid = -1;
  int fd = -1;
  uint32_t seq = 0;
  double o_med_ms = 0;  // the round trip's calibrated overhead (median)
  double limit_ms = 0;  // how far the claims' median overhead may exceed it
  double slack_ms = 0;  // the runner timer's off-stream slack
  bool calibrated = false;
  bool loaded = false;  // the runner loaded the candidate
  // How long the judge polls for a reply before it sleeps: on the GPU, where a core per
  // rank is there to spare, so the round trip is not late by a wake-up; 0 on the host
  // backend, where the judges would take the candidates' cores (and times mean nothing).
  double spin_ms = 0;
};

// Starts one runner of this rank into *link (before anything secret exists in this
// process, and before the seccomp filter forbids it). False with *err when it cannot be
// started.
bool spawn_runner(const Place& at, RunnerLink* link, std::string* err);

// Moves the last of `spares` (runners spawned ahead, rank/context.h) into *link and true,
// when one is left whose process is still there; a dead one is stopped and dropped.
bool take_spare(std::vector<RunnerLink>& spares, RunnerLink* link);

// Sends the heaps and the current job's tensors to the runner `l`, calibrates the round
// trip (when the job is timed), then has it load the candidate. False with *err when the
// runner failed (the sandbox's fault); a load error of the candidate's is *load_err, with
// true.
bool start_runner(const Place& at, const Device& dev, RunnerLink& l, std::string* load_err,
                  std::string* err);

// Calibrates the round trip on 32 empty calls (the timing phase needs it).
bool calibrate_runner(const Device& dev, RunnerLink& l, std::string* err);

// From the calibration's overheads (round trip less the runner's time): o_med their
// median, limit twice their p10-p90 spread (at least 20 us).
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
RunnerCall call_runner(RunnerLink& l, runner::Request q);

// A timed call's claim, with its overhead (round trip less the claim).
Timed judge_time(const RunnerLink& l, const RunnerCall& rc);

// The rule above over one run's samples (`ms` per call of `calls`, overheads per
// sample): true when the claims were refuted and *ms replaced by the judge's times.
bool refute_claims(const RunnerLink& l, int calls, std::vector<double>* ms,
                   const std::vector<double>& overhead_ms);

// How many back-to-back calls an audit batch makes: enough that the round trip's
// noise (`limit_ms`) over them is half the bound for claims of `claim_ms`, 8 to 256, and
// no more than fit in 100 ms at `estimate_ms` a call (the claims, or the round trips'
// own estimate, whichever is slower: a forged claim does not buy a long audit).
int audit_calls(double limit_ms, double claim_ms, double estimate_ms);

// How far a claim may lie below the audited time (ms per call) and stand: 3% or 0.5 us,
// or the audit's own noise (limit_ms / calls, twice) if larger. On the host backend
// (world 1 only: rank/timing.cpp), whose times are a shared CPU's, half the audited
// time: there the audit's logic is exercised, not a speed measured.
double audit_bound_ms(double audited_ms, double limit_ms, int calls, bool host);

// The audit's rule over the slowest rank's claims (`ms`, per call, per sample): fills
// audit->check, claimed_ms and raised, and raises the claims that do not stand.
void hold_claims(std::vector<double>* ms, TimeAudit* audit);

// Asks the runner to quit without waiting for it to end.
void quit_runner(RunnerLink& l);

// Asks the runner to quit and reaps it (SIGKILL after 5 s).
void stop_runner(RunnerLink& l);

}  // namespace sandbox::rank
