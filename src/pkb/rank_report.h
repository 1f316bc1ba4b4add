// pkb/rank_report.h: what kforge's PKB driver (sandbox/pkb/pkb_eval.py) writes for each
// rank as <work_dir>/rank<R>.json, and the one reader of it (evaluate.cpp's verdicts).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pkb/evaluate.h"
#include "sandbox/verdict.h"

namespace pkb {

// One trial's times in a rank's report.
struct RankTrial {
  int trial = 0;
  double ref_ms = 0, cand_ms = 0;
  double speedup = -1;  // the median of its paired rounds' (-1: a driver that gives none)
  // Why the timed calls' last outputs went unchecked (no room for fresh inputs, say); ""
  // when they were checked (sandbox/pkb/pkb_fresh.py).
  std::string unchecked;
  // Why --timed-check clones, asked for, was not had (no room), --timed-check last's
  // checking instead; "" otherwise.
  std::string no_clones;
  // How many of the warmup calls asked for were made, where --warmup-s ended them; "" when
  // all were (sandbox/pkb/pkb_timing.py: warm_up).
  std::string short_warmup;
};

// How the driver says a rank's job ended: a verdict's status (sandbox::Status's names; a
// word it does not know reads as a crash), or one of its own two: environment (this setup
// cannot run the job: no torch, no CUDA, fewer GPUs than ranks) or reference (the
// reference's code or the making of the inputs raised). Neither of those is a candidate's
// verdict until checked (evaluate()).
struct RankEnd {
  enum class Kind { verdict, environment, reference } kind = Kind::verdict;
  sandbox::Status status = sandbox::Status::crash;  // Kind::verdict
};
void from_json(const nlohmann::json& j, RankEnd& e);
void to_json(nlohmann::json& j, const RankEnd& e);

// What the driver (sandbox/pkb/pkb_eval.py) writes as <work_dir>/rank<R>.json.
struct RankReport {
  RankEnd status;
  std::string phase, message;
  std::string side;    // whose code ran in the phase: ref, cand, inputs, or ""
  std::string python;  // the interpreter's sys.executable
  std::string tensor;  // mismatch: the output that differs, and how
  int trial = -1;
  double max_abs = 0;
  int64_t bad = 0, total = 0;
  std::vector<std::string> changed;  // rejected: what the candidate replaced (pkb_tamper.py)
  std::vector<RankTrial> trials;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankTrial, trial, ref_ms, cand_ms, speedup,
                                                unchecked, no_clones, short_warmup)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankReport, status, phase, message, side, python,
                                                tensor, trial, max_abs, bad, total, changed, trials)

// Every rank's report, by rank; a rank whose file is missing or not a report has none.
using Reports = std::vector<std::optional<RankReport>>;
Reports read_reports(const EvalSpec& spec);

}  // namespace pkb
