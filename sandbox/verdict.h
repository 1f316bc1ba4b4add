// sandbox/verdict.h: what one evaluation concluded (DESIGN.md "Verdicts"), as JSON for
// the record and as text a person or a model can act on.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "job.h"
#include "static_check.h"

namespace sandbox {

struct Verdict {
  Status status = Status::rejected;  // set by whatever makes the verdict
  std::string summary;               // one line
  std::string problem, candidate;
  int world = 0;
  Backend backend = Backend::cuda;
  bool emulated = false;
  std::string size;  // the instance that decided it, e.g. "small"
  std::string log;   // compiler log, mpirun output tail, ...
  std::vector<Finding> findings;
  std::vector<Failure> failures;
  std::vector<int> failure_ranks;  // failure_ranks[i]: the rank that reported failures[i]
  struct Stuck {
    int rank = 0;
    std::string phase, detail;
    double seconds = 0;  // in that phase
    bool in_candidate = false;
  };
  std::vector<Stuck> stuck;   // ranks past their phase's limit (timeout)
  std::vector<Stuck> others;  // the other ranks' last status, for context
  double limit_s = 0;
  struct Crash {
    int rank = 0;
    std::string what;  // "signal 11 (SIGSEGV) in check trial 0 call 0"
  };
  std::vector<Crash> crashes;
  struct Tolerance {
    std::string tensor;
    double atol = 0, rtol = 0;
  };
  std::vector<Tolerance> tolerances;  // of the outputs, for mismatch feedback
  bool timed = false;
  // (named _time because `candidate` above is the source path)
  TimeStats candidate_time, baseline_time;
  // What baseline_time timed, as the summary names it: the problem's NCCL baseline, or a
  // ParallelKernelBench problem's PyTorch reference.
  std::string baseline_label = "NCCL";
  double speedup = 0;  // 0 = not reported
  double roofline_ms = 0, pct_roofline = 0, busbw_gbps = 0, baseline_busbw_gbps = 0;
  // The most work past comm.stream()'s end event the timer cannot tell from noise.
  double off_stream_slack_ms = 0;
  // The most the candidate's process could take off its own time unrefuted.
  double timer_margin_ms = 0;
  // The timing audit (rank/runner_link.h): whether the claimed times held against the
  // judges' clocks. Refuted: the times above are the audited ones.
  TimeAudit audit;
  std::vector<std::string> notes, flags;
  // What kforge's harness did around the candidate (how the run was confined, a check it
  // could not make): for the person reading the verdict, left out of the model's feedback.
  std::vector<std::string> harness_notes;
  // Where the time went: static, compile, launch+check+time (one launch for every size),
  // each size's phases inside the ranks ("small/check", ...), mpirun start+exit, total.
  std::vector<std::pair<std::string, double>> seconds;
};

// The verdict's parts that are plain data map by nlohmann's macros; the verdict itself by
// hand (verdict_json), as it adds what readers want beside the fields (each failure's rank,
// each finding rendered, the summary).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Verdict::Stuck, rank, phase, detail, seconds,
                                                in_candidate)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Verdict::Crash, rank, what)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Verdict::Tolerance, tensor, atol, rtol)

nlohmann::json verdict_json(const Verdict& v);

// The one-line summary for the verdict's fields (what `summary` is set to).
std::string summarize(const Verdict& v);

// The summary, then the details: findings, failures, crashes, stuck ranks, the log,
// notes and flags.
std::string render_text(const Verdict& v);

// Most of the timed samples ran past comm.stream()'s end event: a kernel built around
// hiding work (a few such samples are a late wake-up). The flag and the note use this.
inline bool mostly_off_stream(const TimeStats& t) {
  return t.off_stream * 2 > t.n;
}

// The timed samples' times, as the candidate's process reported them, were refuted by
// its judge's round trips (forged, or a process too busy to answer in time).
inline bool mostly_unconfirmed(const TimeStats& t) {
  return t.unconfirmed * 2 > t.n;
}

// Sets the faster_than_roofline / excessive_speedup / work_off_stream / time_unconfirmed flags from
// the figures.
void flag_suspicious(Verdict* v);

// "rank 1, tensor y, 4099 of 4099 elements wrong; first bad: y[0] = 1.25 (want 0.5), ...".
std::string describe_failure(const Failure& f, int rank, const Verdict& v);

}  // namespace sandbox
