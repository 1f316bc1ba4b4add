// agent/feedback.h: a verdict turned into the next user message, through the
// prompts/feedback_<status>.md templates. Each verdict says what an author can act on:
// a compile error trimmed to its errors, a mismatch with rank, tensor and first bad
// indices, a hang with the ranks and phases stuck, times against baseline and roofline.
#pragma once

#include <string>

#include "sandbox/verdict.h"

namespace agent {

// Whether the verdict's times measure speed: cuda, not emulated, timed, with a speedup.
bool speedup_measurable(const sandbox::Verdict& v);

// Correct, and (speedup >= target, or no speedup can be measured here).
bool target_met(const sandbox::Verdict& v, double target);

// Is `a` a better candidate than `b`? Correct beats not; then the higher speedup, or
// where speed is not measurable, the lower median time.
bool better_than(const sandbox::Verdict& a, const sandbox::Verdict& b);

// The feedback message for verdict v of turn `turn`. False with *err when a template is
// missing or does not fit.
bool render_feedback(const std::string& prompts_dir, const sandbox::Verdict& v, int turn,
                     double target, std::string* out, std::string* err);

// The message after a reply kforge could not use (prompts/format_error.md): `why`, and
// how many more such replies end the run.
bool render_format_error(const std::string& prompts_dir, const std::string& why, int remaining,
                         std::string* out, std::string* err);

// At most max_lines lines and max_chars characters of a log, head kept, with a note of
// what was cut.
std::string clip_head(const std::string& log, size_t max_lines, size_t max_chars);
std::string clip_tail(const std::string& log, size_t max_lines, size_t max_chars);

}  // namespace agent
