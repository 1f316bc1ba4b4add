// sandbox/rank/runner_time.cpp: the judge's rule for the runner's claimed times
// (runner_link.h), apart from the sockets and MPI so that the tests can hold it.
#include <algorithm>
#include <cmath>

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

int audit_calls(double limit_ms, double claim_ms, double estimate_ms) {
  const double bound = std::max(0.03 * std::max(claim_ms, 0.0), 0.0005);
  int n = static_cast<int>(std::ceil(2 * limit_ms / bound));
  const double per = std::max({claim_ms, estimate_ms, 1e-6});
  n = std::min(n, static_cast<int>(100.0 / per));
  return std::clamp(n, 8, 256);
}

double audit_bound_ms(double audited_ms, double limit_ms, int calls, bool host) {
  double b = std::max({0.03 * audited_ms, 0.0005, 2 * limit_ms / std::max(calls, 1)});
  return host ? std::max(b, 0.5 * audited_ms) : b;
}

void hold_claims(std::vector<double>* ms, TimeAudit* a) {
  if (ms->empty() || a->batches == 0) return;
  a->claimed_ms = median(*ms);
  const bool refuted = a->claimed_ms < a->audited_ms - a->bound_ms;
  a->check = refuted ? TimeCheck::refuted : TimeCheck::confirmed;
  a->raised = 0;
  for (double& m : *ms)
    if (refuted ? m < a->audited_ms : m < a->audited_ms - a->bound_ms) {
      m = a->audited_ms;
      ++a->raised;
    }
}

}  // namespace sandbox::rank
