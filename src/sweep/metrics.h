// src/sweep/metrics.h: what a sweep's samples add up to, per problem, category or model.
//
// pass@k is the unbiased estimator from n samples of which c are correct (Chen et al.,
// "Evaluating Large Language Models Trained on Code"): the chance that at least one of k
// samples drawn without replacement is correct, 1 - C(n-c, k) / C(n, k). fast_p@k is the
// same estimator over the samples that are correct *and* at least p times faster than
// the baseline (KernelBench's fast_p is fast_p@1). A speedup exists only where a speed
// was measured: on the host backend or with emulated ranks no sample has one, and then
// fast_p is absent rather than 0. Only a confirmed speedup counts towards fast_p and the
// geomean: one whose times the timing audit refuted (sandbox/rank/runner_link.h) rests
// on a time the candidate's process made up, and counts as correct only.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sweep/json_optional.h"

namespace sweep {

// One finished sample, as the metrics need it.
struct SampleOutcome {
  bool correct = false;
  std::optional<double> speedup;  // over the baseline; none when no speed was measured
  int turns_to_correct = -1;      // the turn of its first correct kernel (1-based); -1: none
  int64_t tokens_to_correct = 0;  // tokens spent up to and including that turn
  double cost_to_correct = 0;     // dollars, likewise
  bool speed_confirmed = true;    // false: the timing audit refuted the claimed times
};

// 1 - C(n-c, k) / C(n, k), as a product so that no binomial overflows. 0 <= c <= n,
// 1 <= k <= n.
double pass_at_k(int n, int c, int k);

// 1, 2, 4, ... up to n, and n itself when it is not a power of two.
std::vector<int> ks_up_to(int n);

// pass@k (or fast_p@k) at one k.
struct KValue {
  int k = 0;
  double value = 0;
  bool operator==(const KValue&) const = default;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(KValue, k, value)

struct FastP {
  double p = 1.0;
  int count = 0;             // samples correct and at least p times the baseline
  std::vector<KValue> at_k;  // fast_p@k for ks_up_to(n)
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FastP, p, count, at_k)

// Also the JSON of `kforge sweep status --json` (one per row, see report_table.h).
struct Metrics {
  int n = 0;                 // samples
  int correct = 0;           // of them correct
  std::vector<KValue> pass;  // pass@k for ks_up_to(n)
  // Whether any sample had a measured speed; fast and geomean_speedup only then.
  bool speed_measured = false;
  std::vector<FastP> fast;                // p = 1.0, 1.5, 2.0
  std::optional<double> geomean_speedup;  // over the correct samples with a speed
  // Means over the samples that reached a correct kernel, up to its verdict.
  std::optional<double> turns_to_correct, tokens_to_correct, cost_to_correct;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Metrics, n, correct, pass, speed_measured, fast,
                                                geomean_speedup, turns_to_correct,
                                                tokens_to_correct, cost_to_correct)

Metrics compute_metrics(const std::vector<SampleOutcome>& samples);

}  // namespace sweep
