// sandbox/job_enums.h: the words of the job contract (job.h) as types: whose library a
// thing is, which backend runs it, where expected outputs come from and how it is
// timed. On disk they stay the strings they always were (enum_names.h).
#pragma once

#include "enum_names.h"

namespace sandbox {

// Whose library: the candidate's, or the problem's baseline (NCCL on cuda).
enum class Role { candidate, baseline };

// cuda: the GPUs; host: the same sandbox on the CPU, for machines without a GPU.
enum class Backend { cuda, host };

// Where expected outputs come from: the CPU oracle (double precision), the baseline's
// outputs on the same inputs, or none (nothing was checked).
enum class Reference { oracle, baseline, none };

// isolated: one call per sample, behind a barrier, L2 flushed; batched: nccl-tests'
// method, back-to-back calls per sample (job.h).
enum class Timing { isolated, batched };

// Whether the candidate's claimed times held against its judge's own clock (the timing
// audit, rank/runner_link.h): confirmed, refuted (the times of record are the judge's),
// or unaudited (not timed, the candidate ran in the judge, or under a profiler).
enum class TimeCheck { unaudited, confirmed, refuted };

template <>
struct EnumNames<Role> {
  static constexpr const char* what = "role";
  static constexpr const char* names[] = {"candidate", "baseline"};
};
template <>
struct EnumNames<Backend> {
  static constexpr const char* what = "backend";
  static constexpr const char* names[] = {"cuda", "host"};
};
template <>
struct EnumNames<Reference> {
  static constexpr const char* what = "reference";
  static constexpr const char* names[] = {"oracle", "baseline", "none"};
};
template <>
struct EnumNames<Timing> {
  static constexpr const char* what = "timing";
  static constexpr const char* names[] = {"isolated", "batched"};
};

template <>
struct EnumNames<TimeCheck> {
  static constexpr const char* what = "time check";
  static constexpr const char* names[] = {"unaudited", "confirmed", "refuted"};
};

KF_ENUM_JSON(Role)
KF_ENUM_JSON(TimeCheck)
KF_ENUM_JSON(Backend)
KF_ENUM_JSON(Reference)
KF_ENUM_JSON(Timing)

inline const char* role_name(Role r) {
  return enum_name(r);
}
inline const char* backend_name(Backend b) {
  return enum_name(b);
}

}  // namespace sandbox
