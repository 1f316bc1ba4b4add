// sandbox/stats.h: summary statistics of per-iteration times.
#pragma once

#include <vector>

#include "job.h"

namespace sandbox {

// Quantile q in [0, 1] of `sorted` (ascending, non-empty), interpolating linearly
// between the closest ranks (numpy's default), so the median of an even count is the
// mean of the middle two.
double quantile(const std::vector<double>& sorted, double q);

// n, median, p10, p90, min and max of `ms`; all zero for an empty vector.
TimeStats time_stats(std::vector<double> ms);

}  // namespace sandbox
