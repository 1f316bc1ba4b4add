// sandbox/rank/stream_timer.cu: see stream_timer.h.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "stream_timer.h"

namespace sandbox::rank {

namespace {
cudaStream_t S(void* s) {
  return static_cast<cudaStream_t>(s);
}
cudaEvent_t E(void* e) {
  return static_cast<cudaEvent_t>(e);
}

// Busy for `ns` nanoseconds of the device's clock: a stand-in for a short call.
__global__ void busy_kernel(uint64_t ns) {
  uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
}  // namespace

std::string cuda_error_text(const char* call, int error) {
  cudaError_t e = static_cast<cudaError_t>(error);
  return std::string(call) + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
}

bool StreamTimer::init(void* stream, std::string* err) {
  stream_ = stream;
  for (void** ev : {&ev_start_, &ev_end_, &ev_idle_}) {
    cudaEvent_t e = nullptr;
    KF_CUDA("cudaEventCreate", cudaEventCreate(&e));
    *ev = e;
  }
  return true;
}

bool StreamTimer::busy(unsigned us, std::string* err) {
  busy_kernel<<<1, 32, 0, S(stream_)>>>(uint64_t{us} * 1000);
  KF_CUDA("busy_kernel launch", cudaGetLastError());
  return true;
}

bool StreamTimer::timed_synchronize(double* ms, std::string* err) {
  auto t0 = std::chrono::steady_clock::now();
  // A launch error of the candidate's (bad configuration) is not sticky: ask for it
  // first, then wait for everything enqueued on any stream.
  KF_CUDA("cudaGetLastError", cudaGetLastError());
  KF_CUDA("cudaDeviceSynchronize", cudaDeviceSynchronize());
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return true;
}

// The off-stream test, calibrated 32 times on a call that leaves nothing behind (a short
// kernel, its end event, then the synchronize): twice the 90th percentile of the
// synchronize's host time, plus 5 us, is the longest drain of an honest call. A longer
// one means work ran past the end event; less than that can go unseen.
bool StreamTimer::calibrate(std::string* err) {
  std::vector<double> drains;
  for (int i = 0; i < 32; ++i) {
    if (!busy(20, err)) return false;
    KF_CUDA("cudaEventRecord (calibration)", cudaEventRecord(E(ev_end_), S(stream_)));
    KF_CUDA("cudaEventSynchronize", cudaEventSynchronize(E(ev_end_)));
    double ms = 0;
    if (!timed_synchronize(&ms, err)) return false;
    drains.push_back(ms);
  }
  std::sort(drains.begin(), drains.end());
  drain_limit_ms_ = 2 * drains[drains.size() * 9 / 10] + 0.005;
  return true;
}

bool StreamTimer::start(std::string* err) {
  if (drain_limit_ms_ < 0 && !calibrate(err)) return false;
  KF_CUDA("cudaEventRecord (start)", cudaEventRecord(E(ev_start_), S(stream_)));
  return true;
}

bool StreamTimer::stop(Timed* t, std::string* err) {
  KF_CUDA("cudaEventRecord (end)", cudaEventRecord(E(ev_end_), S(stream_)));
  KF_CUDA("cudaEventSynchronize", cudaEventSynchronize(E(ev_end_)));
  double drain_ms = 0;
  if (!timed_synchronize(&drain_ms, err)) return false;
  float f = 0;
  KF_CUDA("cudaEventElapsedTime", cudaEventElapsedTime(&f, E(ev_start_), E(ev_end_)));
  t->ms = f;
  // comm.stream() was done at the end event. If the device then took longer to go idle
  // than it does with nothing left, the call hid work elsewhere (another stream, a
  // graph, the copy engine), and its time runs to an event recorded once the host saw
  // the device idle: an upper bound of the work, late by the host's round trip (a few
  // microseconds), which an off-stream call pays and an honest one does not.
  t->off_stream = drain_ms > drain_limit_ms_;
  if (t->off_stream) {
    KF_CUDA("cudaEventRecord (idle)", cudaEventRecord(E(ev_idle_), S(stream_)));
    KF_CUDA("cudaEventSynchronize", cudaEventSynchronize(E(ev_idle_)));
    float g = 0;
    KF_CUDA("cudaEventElapsedTime", cudaEventElapsedTime(&g, E(ev_start_), E(ev_idle_)));
    t->ms = std::max(f, g);
  }
  return true;
}

void StreamTimer::destroy() {
  for (void** ev : {&ev_start_, &ev_end_, &ev_idle_}) {
    if (*ev) cudaEventDestroy(E(*ev));
    *ev = nullptr;
  }
}

}  // namespace sandbox::rank
