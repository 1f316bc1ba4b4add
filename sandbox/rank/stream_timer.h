// sandbox/rank/stream_timer.h: the GPU timer of one stream that also sees work hidden on
// other streams. Used by the judge's CUDA backend (the baseline's calls) and by the
// runner (the candidate's), so both are timed the same way.
#pragma once

#include <string>

#include "backend.h"

namespace sandbox::rank {

class StreamTimer {
 public:
  // `stream` is a cudaStream_t. Creates the events.
  bool init(void* stream, std::string* err);
  // Records the start event; calibrates the off-stream test on first use.
  bool start(std::string* err);
  // Records the end event and waits for the device to be idle. The time ends at the
  // end event unless the device took longer to go idle than it does with nothing left;
  // then it ends at an event recorded once the host saw the device idle (t->off_stream).
  bool stop(Timed* t, std::string* err);
  // The most work past the end event the test cannot tell from noise (0 before start).
  double slack_ms() const { return drain_limit_ms_ > 0 ? drain_limit_ms_ : 0; }
  // Enqueues `us` microseconds of busy work on the stream (calibration, pings).
  bool busy(unsigned us, std::string* err);
  void destroy();

 private:
  bool calibrate(std::string* err);
  bool timed_synchronize(double* ms, std::string* err);

  void* stream_ = nullptr;
  void *ev_start_ = nullptr, *ev_end_ = nullptr, *ev_idle_ = nullptr;
  double drain_limit_ms_ = -1;  // set by calibrate() before the first timed call
};

// "call: error string (error name)".
std::string cuda_error_text(const char* call, int error);

// Checks one CUDA call in a function returning bool with a std::string* err: on failure
// *err names the call and the error.
#define KF_CUDA(call_name, expr)                                                \
  do {                                                                          \
    cudaError_t e_ = (expr);                                                    \
    if (e_ != cudaSuccess) {                                                    \
      *err = ::sandbox::rank::cuda_error_text(call_name, static_cast<int>(e_)); \
      return false;                                                             \
    }                                                                           \
  } while (0)

}  // namespace sandbox::rank
