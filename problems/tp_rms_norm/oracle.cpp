// tp_rms_norm: rank r's y [M, N] is its columns of RMSNorm over the full hidden state,
// y[i][j] = weight(r)[j] * x(r)[i][j] / sqrt(S[i] / (world * N) + eps), where S[i] sums
// the squares of row i over every rank's N columns: the mean square needs all ranks,
// the rest is local.
#include "kf/oracle.h"

#include <cmath>
#include <string>

namespace {

// y must be [M, N]; every rank's x M * N long (row i of every rank is the same token);
// this rank's weight N long (every rank has its own, for its own columns).
bool dims(const sandbox::OracleIO& io, int64_t* m, int64_t* n, std::string* err) {
  const std::vector<int64_t>& sy = io.shape("y", io.rank);
  if (sy.size() != 2) {
    *err = "tp_rms_norm: y is not an [M, N] matrix";
    return false;
  }
  *m = sy[0], *n = sy[1];
  const size_t want_x = static_cast<size_t>(*m * *n);
  for (int r = 0; r < io.world; ++r)
    if (io.input("x", r).size() != want_x) {
      *err = "tp_rms_norm: rank " + std::to_string(r) + "'s x has " +
             std::to_string(io.input("x", r).size()) +
             " elements, want M * N = " + std::to_string(want_x);
      return false;
    }
  if (io.input("weight", io.rank).size() != static_cast<size_t>(*n)) {
    *err = "tp_rms_norm: rank " + std::to_string(io.rank) + "'s weight has " +
           std::to_string(io.input("weight", io.rank).size()) +
           " elements, want N = " + std::to_string(*n);
    return false;
  }
  return true;
}

// S[i]: row i's sum of squares over every rank's columns.
std::vector<double> row_squares(const sandbox::OracleIO& io, int64_t m, int64_t n) {
  std::vector<double> s(static_cast<size_t>(m), 0.0);
  for (int r = 0; r < io.world; ++r) {
    const std::vector<double>& x = io.input("x", r);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double v = x[static_cast<size_t>(i * n + j)];
        s[static_cast<size_t>(i)] += v * v;
      }
  }
  return s;
}

}  // namespace

KF_ORACLE(tp_rms_norm) {
  int64_t m, n;
  if (!dims(io, &m, &n, err)) return false;
  const double eps = io.param("eps");
  const double columns = static_cast<double>(io.world) * static_cast<double>(n);  // full hidden
  const std::vector<double> s = row_squares(io, m, n);
  const std::vector<double>& x = io.input("x", io.rank);
  const std::vector<double>& weight = io.input("weight", io.rank);
  std::vector<double>& y = io.out("y");
  for (int64_t i = 0; i < m; ++i) {
    const double inv_rms = 1.0 / std::sqrt(s[static_cast<size_t>(i)] / columns + eps);
    for (int64_t j = 0; j < n; ++j) {
      const size_t at = static_cast<size_t>(i * n + j);
      y[at] = weight[static_cast<size_t>(j)] * x[at] * inv_rms;
    }
  }
  return true;
}
