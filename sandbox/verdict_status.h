// sandbox/verdict_status.h: a verdict's status (DESIGN.md "Verdicts"), also a rank's
// failure kind, with the one severity order kforge ranks them by.
#pragma once

#include "enum_names.h"

namespace sandbox {

// In the order an eval's stages can fail, which is also the severity order: when ranks
// report several kinds of failure, the earliest in this list decides the verdict (a
// rank that could not load explains its peers' mismatches, not the other way round).
enum class Status {
  rejected,       // static or symbol check
  compile_error,  // the compiler failed
  load_error,     // dlopen or a missing symbol
  setup_error,    // kf_setup failed
  crash,          // a signal, a CUDA error, a rank that ended without a report
  timeout,        // a rank stuck in a phase past its limit
  mismatch,       // an output differs from the reference
  unstable,       // repeated calls disagree
  correct,
};

template <>
struct EnumNames<Status> {
  static constexpr const char* what = "status";
  static constexpr const char* names[] = {"rejected",    "compile_error", "load_error",
                                          "setup_error", "crash",         "timeout",
                                          "mismatch",    "unstable",      "correct"};
};

KF_ENUM_JSON(Status)

inline const char* status_name(Status s) {
  return enum_name(s);
}

// True when `a` decides over `b` (see the order above).
inline bool more_severe(Status a, Status b) {
  return static_cast<int>(a) < static_cast<int>(b);
}

}  // namespace sandbox
