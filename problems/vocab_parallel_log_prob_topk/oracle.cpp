// vocab_parallel_log_prob_topk: for every token (row) i the full logits are the world
// shards side by side, z[r*Vl + v] = logits(r)[i][v], plus boost at the label
// c = target(rank i / T)[i] (T = tokens per rank); top-k keeps the entries >= the k-th
// largest, top-p then drops the ascending prefix whose cumulative probability is <= 1 - p,
// and logp[i] = z[c] - log(sum of exp over what is kept), on every rank.
#include "kf/oracle.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

// Every rank's logits must be [batch, seq, Vl] and target [batch, seq], logp batch * seq
// long, and batch * seq a multiple of world. Sets *rows = batch * seq, *vl = Vl.
bool dims(const sandbox::OracleIO& io, size_t out_size, int64_t* rows, int64_t* vl,
          std::string* err) {
  const std::vector<int64_t>& sl = io.shape("logits", 0);
  if (sl.size() != 3) {
    *err = "vocab_parallel_log_prob_topk: rank 0's logits are not [batch, seq, V/world]";
    return false;
  }
  *rows = sl[0] * sl[1], *vl = sl[2];
  for (int r = 0; r < io.world; ++r)
    if (io.shape("logits", r) != sl ||
        io.input("logits", r).size() != static_cast<size_t>(*rows * *vl) ||
        io.input("target", r).size() != static_cast<size_t>(*rows)) {
      *err = "vocab_parallel_log_prob_topk: rank " + std::to_string(r) +
             "'s logits or target differ in shape from rank 0's [batch, seq, V/world] and "
             "[batch, seq]";
      return false;
    }
  if (*rows % io.world != 0 || out_size != static_cast<size_t>(*rows)) {
    *err = "vocab_parallel_log_prob_topk: batch * seq = " + std::to_string(*rows) +
           " must be a multiple of world and logp that long; logp has " + std::to_string(out_size);
    return false;
  }
  return true;
}

// The log-prob of entry c of row z under the two filters (z is reordered in place).
double filtered_log_prob(std::vector<double>& z, int64_t c, int64_t k, double top_p) {
  const double zc = z[static_cast<size_t>(c)];
  std::sort(z.begin(), z.end());  // ascending
  // Top-k: the k-th largest is z[V - k]; every entry >= it is kept, ties included, so the
  // kept entries are the suffix from the first one equal to it.
  const double h = z[z.size() - static_cast<size_t>(k)];
  const size_t first = static_cast<size_t>(std::lower_bound(z.begin(), z.end(), h) - z.begin());
  if (zc < h) return -INFINITY;
  const double top = z.back();
  double total = 0;
  for (size_t j = first; j < z.size(); ++j) total += std::exp(z[j] - top);
  // Top-p: drop the ascending prefix whose cumulative probability stays <= 1 - p; the
  // last entry is always kept.
  size_t keep = first;
  for (double cum = 0; keep + 1 < z.size(); ++keep) {
    cum += std::exp(z[keep] - top) / total;
    if (cum > 1 - top_p) break;
  }
  // The label is the row's unique maximum under the promised inputs; in general it
  // survives top-p when it is not below the first kept value.
  if (zc < z[keep]) return -INFINITY;
  double kept = 0;
  for (size_t j = keep; j < z.size(); ++j) kept += std::exp(z[j] - top);
  return zc - top - std::log(kept);
}

}  // namespace

KF_ORACLE(vocab_parallel_log_prob_topk) {
  std::vector<double>& logp = io.out("logp");
  int64_t rows, vl;
  if (!dims(io, logp.size(), &rows, &vl, err)) return false;
  const int64_t vocab = io.world * vl, per_rank = rows / io.world;
  const int64_t k = io.iparam("top_k", 10);
  const double top_p = io.param("top_p", 0.9), boost = io.param("boost", 8);
  if (k < 1 || k > vocab) {
    *err = "vocab_parallel_log_prob_topk: top_k = " + std::to_string(k) + " is not in [1, " +
           std::to_string(vocab) + "]";
    return false;
  }
  std::vector<double> z(static_cast<size_t>(vocab));
  for (int64_t i = 0; i < rows; ++i) {
    const double c = io.input("target", static_cast<int>(i / per_rank))[static_cast<size_t>(i)];
    if (!(c >= 0 && c < static_cast<double>(vocab))) {
      *err = "vocab_parallel_log_prob_topk: rank " + std::to_string(i / per_rank) + "'s target[" +
             std::to_string(i) + "] = " + std::to_string(c) + " is not a label in [0, " +
             std::to_string(vocab - 1) + "]";
      return false;
    }
    for (int r = 0; r < io.world; ++r) {
      const double* x = io.input("logits", r).data() + i * vl;
      std::copy(x, x + vl, z.begin() + r * vl);
    }
    const int64_t label = static_cast<int64_t>(c);
    z[static_cast<size_t>(label)] += boost;
    logp[static_cast<size_t>(i)] = filtered_log_prob(z, label, k, top_p);
  }
  return true;
}
