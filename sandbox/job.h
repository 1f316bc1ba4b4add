// sandbox/job.h: the contract between `kforge` (the host side of the sandbox) and each
// `kforge-rank` process. kforge resolves a problem instance into a Job (every shape
// concrete, per rank), writes it as job.json into the run directory and starts the
// ranks; each rank reports through files in the same directory:
//
//   <dir>/job.json            the Job below (written by kforge)
//   <dir>/status/rank<R>      one JSON line, replaced atomically at every phase change:
//                             {"pid","phase","detail","in_candidate","since_ms","limit_s"}
//   <dir>/status/rank<R>.crash  written by the rank's fatal-signal handler:
//                             "signal 11 (SIGSEGV) in <phase> <detail>"
//   <dir>/rank<R>.json        the rank's RankReport (below), written before it exits
//   <dir>/result.json         rank 0's RunReport: timings over all ranks
//
// Nothing else is shared: the ranks talk to each other over MPI only.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "job_enums.h"
#include "kf/abi.h"
#include "settings.h"
#include "verdict_status.h"

namespace kf {
// A dtype is its name in JSON ("bf16"); every spelling parse_dtype knows reads.
void to_json(nlohmann::json& j, DType t);
void from_json(const nlohmann::json& j, DType& t);
}  // namespace kf

namespace sandbox {

// How an input tensor's values are drawn (see sandbox/inputs.h). Outputs have none.
struct InitSpec {
  std::string dist = "uniform";  // "uniform" [a, b) | "normal" (mean a, std b) | "int" [a, b]
  double a = -1.0;
  double b = 1.0;
};

struct JobTensor {
  std::string name;
  kf::DType dtype = kf::DType::f32;
  bool output = false;
  // shape_by_rank[r] is rank r's shape; every entry has the same number of dimensions.
  std::vector<std::vector<int64_t>> shape_by_rank;
  InitSpec init;              // inputs only
  double atol = 0, rtol = 0;  // outputs only: |got - want| <= atol + rtol * |want|
};

// One job: the evaluation's settings, whole, and what this job adds to them: one size's
// shapes and parameters, where it runs, the libraries, and whether this size is the one
// checked for races or the one timed.
struct Job {
  Settings settings;
  std::string size;   // which of the settings' sizes ("small", "full")
  bool timed = true;  // settings.time, and this is the last size: the one whose speed counts
  bool race = true;   // settings.race_pass, and this is the first size (settings.h)
  std::string dir;    // the run directory (absolute)
  std::string candidate_lib;  // absolute path of the candidate's .so
  std::string baseline_lib;   // absolute path of the baseline's .so; "" for none
  // The candidate is a problem's baseline (`kforge baseline`): it gets the NCCL
  // communicator a candidate never sees.
  bool candidate_is_baseline = false;
  // Where expected outputs come from: "oracle" (CPU, double precision) or "baseline"
  // (the baseline's outputs on the same inputs). When the baseline cannot run (NCCL
  // refuses several ranks on one GPU), a rank falls back to the oracle and says so.
  Reference reference = Reference::oracle;
  std::map<std::string, double> params;           // numeric parameters, passed to kf_run
  std::map<std::string, std::string> str_params;  // e.g. dtype=bf16 (already applied)
  std::vector<JobTensor> tensors;                 // in problem order
  uint64_t workspace_bytes = 64ull << 20;         // symmetric workspace for comm.alloc
  std::string shm_prefix;                         // host backend: POSIX shm name prefix
  // When set, the libraries are still being built as the ranks start: they wait for this
  // file before loading them (rank/build_gate.h).
  std::string build_gate;

  // The random delays' seed, and the inputs' when the settings fix them.
  uint64_t seed() const { return settings.seed != 0 ? settings.seed : 42; }
  bool fixed_inputs() const { return settings.seed != 0; }
};

// A failure seen by one rank. `kind` is a verdict name of DESIGN.md.
struct Failure {
  Status kind = Status::crash;  // load_error | setup_error | crash | mismatch | unstable
  Role who = Role::candidate;
  std::string message;  // one readable line
  std::string phase;    // the phase it happened in
  // mismatch / unstable details
  std::string tensor;
  int trial = -1, call = -1;
  int64_t bad_count = 0, total = 0;
  double max_abs = 0, max_rel = 0;
  bool input_modified = false;  // the tensor is an input that kf_run wrote
  struct Bad {
    std::vector<int64_t> index;  // multi-dimensional index
    double got = 0, want = 0;
  };
  std::vector<Bad> first_bad;  // at most 8
};

struct TimeStats {
  int n = 0;
  double median_ms = 0, p10_ms = 0, p90_ms = 0, min_ms = 0, max_ms = 0;
  // Samples whose work ran past comm.stream()'s end event on some rank (another stream,
  // the copy engine, ...): timed to the device being idle instead.
  int off_stream = 0;
  // Samples whose time the candidate's process claimed and its judge's round trips
  // refuted (rank/runner_link.h: the claims are judged together, so 0 or n): timed by
  // the round trip instead.
  int unconfirmed = 0;
};

// The timing audit (rank/runner_link.h): batches of back-to-back calls timed by the
// judges' own clocks, held against the candidate's claimed times.
struct TimeAudit {
  TimeCheck check = TimeCheck::unaudited;
  int batches = 0, calls = 0;  // audit batches, and calls in each
  double audited_ms = 0;       // per call, by the judges' clocks (the slowest rank)
  double claimed_ms = 0;       // the claims' median, per call, before the audit
  double bound_ms = 0;         // how far below audited_ms a claim may lie and stand
  int raised = 0;              // timed samples whose claim was raised to audited_ms
};

struct RankReport {
  int rank = 0;
  int pid = 0;
  int device = -1;
  bool emulated = false;
  bool baseline_ran = false;
  Reference reference_used = Reference::none;
  std::vector<Failure> failures;
  std::vector<std::string> notes;
  std::vector<std::string> isolation;  // how the rank confined itself (rank/harden.h)
  // The harness's own failures (the oracle could not gather the inputs, say): the eval is
  // then kforge's error, not the candidate's verdict.
  std::vector<std::string> sandbox_errors;
};

// Written by rank 0 after the timing phase; times are per iteration, the slowest rank's.
struct RunReport {
  int world = 1;
  bool emulated = false;
  Backend backend = Backend::cuda;
  std::string device_name;
  int devices = 0;
  bool timed = false;
  bool baseline_timed = false;
  TimeStats candidate;
  TimeStats baseline;
  int timed_calls_verified = 0;
  // The most work past comm.stream()'s end that the timer cannot tell from noise (the
  // largest over ranks; 0 on the host backend).
  double off_stream_slack_ms = 0;
  // The most a candidate's process can take off its own time unrefuted: the round trip's
  // calibrated spread (the largest over ranks; 0 when the candidate ran in the judge).
  double timer_margin_ms = 0;
  // Rank 0's round trip less the claimed time: calibrated (median, limit) and over
  // the candidate's timed samples (10th, 50th, 90th percentile). Diagnostic.
  std::vector<double> timer_overhead_ms;
  TimeAudit audit;
  // Rank 0's wall seconds per phase (mpi_init, bootstrap, load, setup, check, time), in
  // order: where an eval's seconds go once the ranks are running.
  std::vector<std::pair<std::string, double>> phase_s;
  std::vector<std::string> notes;
};

// JSON conversion: every struct above round-trips through nlohmann::json.
// By hand: a poisoned output's error is NaN, which JSON cannot hold (job.cpp).
void to_json(nlohmann::json& j, const Failure::Bad& v);
void from_json(const nlohmann::json& j, Failure::Bad& v);
void to_json(nlohmann::json& j, const Failure& v);
void from_json(const nlohmann::json& j, Failure& v);

// The contract's JSON: one mapping per type, every field optional on reading (an older
// or newer writer's file still reads; a missing field keeps the default above).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(InitSpec, dist, a, b)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(JobTensor, name, dtype, output, shape_by_rank, init,
                                                atol, rtol)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Job, settings, size, timed, race, dir,
                                                candidate_lib, baseline_lib, candidate_is_baseline,
                                                reference, params, str_params, tensors,
                                                workspace_bytes, shm_prefix, build_gate)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimeStats, n, median_ms, p10_ms, p90_ms, min_ms,
                                                max_ms, off_stream, unconfirmed)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimeAudit, check, batches, calls, audited_ms,
                                                claimed_ms, bound_ms, raised)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankReport, rank, pid, device, emulated,
                                                baseline_ran, reference_used, failures, notes,
                                                isolation, sandbox_errors)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunReport, world, emulated, backend, device_name,
                                                devices, timed, baseline_timed, candidate, baseline,
                                                timed_calls_verified, off_stream_slack_ms,
                                                timer_margin_ms, timer_overhead_ms, audit, phase_s,
                                                notes)

bool parse_dtype(const std::string& s, kf::DType* out);
const char* dtype_name(kf::DType t);

// Reads a JSON file into `out`; false with a message naming the file on error.
bool read_json_file(const std::string& path, nlohmann::json* out, std::string* err);
// Writes `j` to `path` through a temporary file and a rename, so readers never see half.
bool write_json_file(const std::string& path, const nlohmann::json& j, std::string* err);

}  // namespace sandbox
