// sandbox/verdict_text.h: the small pieces of verdict text that both verdict.cpp (the
// rendering, the JSON, the flags) and verdict_summary.cpp (the one-line summary) write.
// Internal to those two files.
#pragma once

#include <fmt/format.h>

#include <string>

#include "verdict.h"

namespace sandbox {

inline std::string num(double x) {
  return fmt::format("{:.3g}", x);
}

// "check (trial 0 call 0, inside kf_run)"
inline std::string phase_text(const Verdict::Stuck& s) {
  std::string extra = s.detail;
  if (s.in_candidate) extra += std::string(extra.empty() ? "" : ", ") + "inside kf_run";
  return s.phase + (extra.empty() ? "" : " (" + extra + ")");
}

// Whether the verdict's times are a speed measurement (a real GPU, ranks not emulated).
inline bool times_meaningful(const Verdict& v) {
  return v.backend == Backend::cuda && !v.emulated;
}

}  // namespace sandbox
