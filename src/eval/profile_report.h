// eval/profile_report.h: what running a candidate under a GPU tool found (the types only;
// eval/profile.h runs it). Nsight Compute gives one KernelProfile per kernel launched in
// the profiled call, per rank and side; compute-sanitizer gives its reports, first first.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sandbox/enum_names.h"
#include "sandbox/job_enums.h"
#include "sandbox/verdict.h"

namespace eval {

// ncu: Nsight Compute's counters for one timed call; the others: compute-sanitizer's tools.
enum class Tool { ncu, memcheck, racecheck, synccheck };

// ran: the tool ran and its report was read; skipped: it could not run here (no tool, the
// host backend, no access to the GPU's counters), and `note` says why; failed: the run
// under it did not finish or left no report (the verdict says how).
enum class ProfileStatus { ran, skipped, failed };

}  // namespace eval

namespace sandbox {
template <>
struct EnumNames<eval::Tool> {
  static constexpr const char* what = "tool";
  static constexpr const char* names[] = {"ncu", "memcheck", "racecheck", "synccheck"};
};
template <>
struct EnumNames<eval::ProfileStatus> {
  static constexpr const char* what = "profile status";
  static constexpr const char* names[] = {"ran", "skipped", "failed"};
};
}  // namespace sandbox

namespace eval {

KF_ENUM_JSON(Tool)
KF_ENUM_JSON(ProfileStatus)

// One kernel launch inside the profiled call, as Nsight Compute measured it.
struct KernelProfile {
  int rank = 0;
  sandbox::Role side = sandbox::Role::candidate;  // the candidate's process, or the judge's
  std::string process;                            // kforge-runner | kforge-rank
  int id = 0;                                     // ncu's launch number in that rank's report
  std::string kernel;                             // the demangled name
  std::string block, grid;                        // "(256, 1, 1)"
  // Metric name -> value in its base unit (nanoseconds, bytes, percent, count).
  std::map<std::string, double> metrics;

  // A metric's value, or `otherwise` where the report has none.
  double get(const std::string& name, double otherwise = -1) const;
};

// One report of compute-sanitizer's, as it printed it.
struct SanitizerFinding {
  int rank = 0;
  std::string what;    // "Invalid __global__ write of size 4 bytes", "Race reported between ..."
  std::string kernel;  // the device function it names, where it names one
  std::string file;    // the source file it names ("" when none)
  int line = 0;
  std::string text;  // the report's lines, without the host backtrace
};

struct ProfileReport {
  Tool tool = Tool::ncu;
  ProfileStatus status = ProfileStatus::skipped;
  std::string note;       // why skipped or failed; what to know about the figures
  std::string tool_path;  // the ncu or compute-sanitizer that ran
  std::string dir;        // where its raw files are (rank<R>.ncu-rep, sanitizer-rank<R>.log)
  std::vector<std::string> raw_files;
  double seconds = 0;  // the run under the tool, reading its reports included
  int world = 1;
  bool emulated = false;
  double roofline_ms = 0;  // the cost model's floor for the profiled instance
  std::vector<KernelProfile> kernels;
  std::vector<SanitizerFinding> findings;
  int errors = 0;            // the sanitizer's error count over the ranks (its summaries)
  sandbox::Verdict verdict;  // of the eval under the tool
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(KernelProfile, rank, side, process, id, kernel,
                                                block, grid, metrics)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SanitizerFinding, rank, what, kernel, file, line,
                                                text)

// The report as JSON (`kforge profile --json`, the trajectory's profile event); the
// verdict only when with_verdict.
nlohmann::json profile_json(const ProfileReport& r, bool with_verdict);

}  // namespace eval
