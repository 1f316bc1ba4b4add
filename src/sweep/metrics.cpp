// src/sweep/metrics.cpp: see metrics.h.
#include "metrics.h"

#include <cmath>

namespace sweep {

double pass_at_k(int n, int c, int k) {
  if (n <= 0 || k <= 0 || c <= 0) return 0;
  if (n - c < k) return 1;  // every draw of k holds a correct sample
  // C(n-c, k) / C(n, k) = prod_{i = n-c+1}^{n} (1 - k / i)
  double miss = 1;
  for (int i = n - c + 1; i <= n; ++i) miss *= 1.0 - static_cast<double>(k) / i;
  return 1 - miss;
}

std::vector<int> ks_up_to(int n) {
  std::vector<int> ks;
  for (int k = 1; k <= n; k *= 2) ks.push_back(k);
  if (n > 0 && ks.back() != n) ks.push_back(n);
  return ks;
}

namespace {
std::optional<double> mean(double sum, int count) {
  if (count == 0) return std::nullopt;
  return sum / count;
}
}  // namespace

Metrics compute_metrics(const std::vector<SampleOutcome>& samples) {
  Metrics m;
  m.n = static_cast<int>(samples.size());
  double log_sum = 0, turns = 0, tokens = 0, cost = 0;
  int timed_correct = 0, reached = 0;
  for (const SampleOutcome& s : samples) {
    m.speed_measured = m.speed_measured || s.speedup.has_value();
    if (!s.correct) continue;
    ++m.correct;
    if (s.speedup && *s.speedup > 0 && s.speed_confirmed)
      log_sum += std::log(*s.speedup), ++timed_correct;
    if (s.turns_to_correct > 0) {
      ++reached;
      turns += s.turns_to_correct;
      tokens += static_cast<double>(s.tokens_to_correct);
      cost += s.cost_to_correct;
    }
  }
  for (int k : ks_up_to(m.n)) m.pass.push_back({k, pass_at_k(m.n, m.correct, k)});
  if (m.speed_measured) {
    for (double p : {1.0, 1.5, 2.0}) {
      FastP f;
      f.p = p;
      for (const SampleOutcome& s : samples)
        if (s.correct && s.speed_confirmed && s.speedup && *s.speedup >= p) ++f.count;
      for (int k : ks_up_to(m.n)) f.at_k.push_back({k, pass_at_k(m.n, f.count, k)});
      m.fast.push_back(f);
    }
    if (timed_correct > 0) m.geomean_speedup = std::exp(log_sum / timed_correct);
  }
  m.turns_to_correct = mean(turns, reached);
  m.tokens_to_correct = mean(tokens, reached);
  m.cost_to_correct = mean(cost, reached);
  return m;
}

}  // namespace sweep
