// sandbox/rank/runner_time.cpp: the judge's rule for the runner's claimed times
// (runner_link.h), apart from the sockets and MPI so that the tests can hold it.
#include <algorithm>

#include "runner_link.h"

namespace sandbox::rank {

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
}  // namespace

void set_overheads(RunnerLink* l, std::vector<double> over) {
  std::sort(over.begin(), over.end());
  double p10 = over[over.size() / 10], p90 = over[over.size() * 9 / 10];
  l->o_med_ms = over[over.size() / 2];
  l->limit_ms = std::max(0.020, 2 * (p90 - p10));
  l->calibrated = true;
}

Timed judge_time(const RunnerLink&, const RunnerCall& rc) {
  Timed t;
  t.ms = rc.reply.ms;
  t.off_stream = rc.reply.off_stream != 0;
  t.overhead_ms = rc.round_trip_ms - t.ms;
  return t;
}

bool refute_claims(const RunnerLink& l, int calls, std::vector<double>* ms,
                   const std::vector<double>& overhead_ms) {
  if (!l.calibrated || ms->empty() || calls < 1) return false;
  if (median(overhead_ms) - l.o_med_ms <= l.limit_ms) return false;
  for (size_t i = 0; i < ms->size(); ++i)
    (*ms)[i] = std::max(0.0, ((*ms)[i] * calls + overhead_ms[i] - l.o_med_ms) / calls);
  return true;
}

}  // namespace sandbox::rank
