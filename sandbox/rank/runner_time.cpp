// sandbox/rank/runner_time.cpp: the judge's rule for the runner's claimed times
// (runner_link.h), apart from the sockets and MPI so that the tests can hold it.
#include <algorithm>

#include "runner_link.h"

namespace sandbox::rank {

void set_overheads(RunnerLink* l, std::vector<double> over) {
  std::sort(over.begin(), over.end());
  double p10 = over[over.size() / 10], p90 = over[over.size() * 9 / 10];
  l->o_med_ms = over[over.size() / 2];
  // The high mark: the 90th percentile and twice the spread above it, at least 5 us.
  l->o_hi_ms = p90 + std::max(0.005, 2 * (p90 - p10));
  l->calibrated = true;
}

Timed judge_time(const RunnerLink& l, const RunnerCall& rc) {
  Timed t;
  t.ms = rc.reply.ms;
  t.off_stream = rc.reply.off_stream != 0;
  if (!l.calibrated) return t;
  bool fits = t.ms <= rc.round_trip_ms && t.ms >= rc.round_trip_ms - l.o_hi_ms;
  if (!fits) {
    t.ms = std::max(0.0, rc.round_trip_ms - l.o_med_ms);
    t.unconfirmed = true;
  }
  return t;
}

}  // namespace sandbox::rank
