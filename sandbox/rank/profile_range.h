// sandbox/rank/profile_range.h: the NVTX range around the one call a profile is of
// (job.h `profile`). Nsight Compute is told to profile only kernels launched inside a
// range of this name (src/eval/profile.cpp), so the warm-up, the checks and the runtime's
// own kernels stay out of the report. NVTX is header-only and costs a branch when no
// tool is attached.
#pragma once

#include <nvtx3/nvToolsExt.h>

namespace sandbox::rank {

constexpr const char* kProfileRange = "kf_profile";

class ProfileRange {
 public:
  explicit ProfileRange(bool on) : on_(on) {
    if (on_) nvtxRangePushA(kProfileRange);
  }
  ~ProfileRange() {
    if (on_) nvtxRangePop();
  }
  ProfileRange(const ProfileRange&) = delete;
  ProfileRange& operator=(const ProfileRange&) = delete;

 private:
  bool on_;
};

}  // namespace sandbox::rank
