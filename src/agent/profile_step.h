// agent/profile_step.h: `kforge solve --profile auto|always|never`, the step between a
// verdict and the model's next prompt. With auto, a correct but slow candidate is run
// once more under Nsight Compute and the prompt gains a few lines that name what limits
// it; a crash on an illegal address is rerun under compute-sanitizer memcheck, and a
// result that differs between calls (or a mismatch of a kernel with shared memory, the
// races racecheck sees) under racecheck, and the first report (with file and line) goes
// into the prompt. always: every correct candidate is profiled and every
// crash and mismatch rerun. never (the default): nothing runs and nothing changes. What
// ran, what it cost and what it found (or why it could not run: no tool, the host
// backend) is the trajectory's `profile` event.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "eval/eval.h"
#include "eval/profile_report.h"
#include "sandbox/enum_names.h"
#include "sandbox/verdict.h"

namespace agent {

enum class ProfileMode { never, automatic, always };

}  // namespace agent

namespace sandbox {
template <>
struct EnumNames<agent::ProfileMode> {
  static constexpr const char* what = "profile mode";
  static constexpr const char* names[] = {"never", "auto", "always"};
};
}  // namespace sandbox

namespace agent {

KF_ENUM_JSON(ProfileMode)

// The tool verdict v of the kernel `source` calls for under `mode`; false for none.
bool profile_wanted(ProfileMode mode, const sandbox::Verdict& v, const std::string& source,
                    eval::Tool* tool);

// What one profile step did: the lines for the next prompt ("" when nothing is to be
// said) and the trajectory's event.
struct ProfileStep {
  bool ran = false;      // a tool was asked for (it may have been skipped)
  std::string feedback;  // appended to the verdict's feedback
  nlohmann::json event;  // {turn, tool, status, note, seconds, dir, lines, report}
};

// Runs the tool v calls for on the candidate in `file` (nothing when none). False only
// when kforge itself failed (*err); a tool that is missing or fails is said in the step.
bool profile_step(const eval::EvalConfig& cfg, ProfileMode mode, int turn, const std::string& file,
                  const sandbox::Verdict& v, ProfileStep* out, std::string* err);

}  // namespace agent
