// sandbox/stats.cpp: see stats.h.
#include "stats.h"

#include <algorithm>
#include <cmath>

namespace sandbox {

double quantile(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

TimeStats time_stats(std::vector<double> ms) {
  TimeStats s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  s.n = static_cast<int>(ms.size());
  s.median_ms = quantile(ms, 0.5);
  s.p10_ms = quantile(ms, 0.1);
  s.p90_ms = quantile(ms, 0.9);
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  return s;
}

}  // namespace sandbox
