// reduce_scatter_rmsnorm: rank r's y [rows, hidden] is RMSNorm(m) * gamma(rank 0), where m
// is the mean over ranks of chunk r (rows * hidden elements) of every rank's x.
#include "kf/oracle.h"

#include <cmath>
#include <string>

namespace {

// y must be [rows, hidden]; every rank's x world * rows * hidden long; rank 0's gamma
// hidden long (the other ranks' gamma is empty and never read).
bool dims(const sandbox::OracleIO& io, int64_t* rows, int64_t* hidden, std::string* err) {
  const std::vector<int64_t>& sy = io.shape("y", io.rank);
  if (sy.size() != 2) {
    *err = "reduce_scatter_rmsnorm: y is not a [rows, hidden] matrix";
    return false;
  }
  *rows = sy[0], *hidden = sy[1];
  const size_t want_x = static_cast<size_t>(io.world * *rows * *hidden);
  for (int r = 0; r < io.world; ++r)
    if (io.input("x", r).size() != want_x) {
      *err = "reduce_scatter_rmsnorm: rank " + std::to_string(r) + "'s x has " +
             std::to_string(io.input("x", r).size()) +
             " elements, want world * rows * hidden = " + std::to_string(want_x);
      return false;
    }
  if (io.input("gamma", 0).size() != static_cast<size_t>(*hidden)) {
    *err = "reduce_scatter_rmsnorm: rank 0's gamma has " +
           std::to_string(io.input("gamma", 0).size()) +
           " elements, want hidden = " + std::to_string(*hidden);
    return false;
  }
  return true;
}

}  // namespace

KF_ORACLE(reduce_scatter_rmsnorm) {
  int64_t rows, hidden;
  if (!dims(io, &rows, &hidden, err)) return false;
  const double eps = io.param("eps");
  const std::vector<double>& gamma = io.input("gamma", 0);
  std::vector<double>& y = io.out("y");
  std::vector<const std::vector<double>*> xs;  // every rank's x, looked up once
  for (int r = 0; r < io.world; ++r) xs.push_back(&io.input("x", r));
  std::vector<double> m(static_cast<size_t>(hidden));
  const int64_t first = io.rank * rows * hidden;  // our chunk, in every rank's x
  for (int64_t i = 0; i < rows; ++i) {
    double squares = 0;
    for (int64_t j = 0; j < hidden; ++j) {
      double s = 0;
      for (const std::vector<double>* x : xs)
        s += (*x)[static_cast<size_t>(first + i * hidden + j)];
      m[static_cast<size_t>(j)] = s / io.world;
      squares += m[static_cast<size_t>(j)] * m[static_cast<size_t>(j)];
    }
    const double inv_rms = 1.0 / std::sqrt(squares / static_cast<double>(hidden) + eps);
    for (int64_t j = 0; j < hidden; ++j)
      y[static_cast<size_t>(i * hidden + j)] =
          m[static_cast<size_t>(j)] * inv_rms * gamma[static_cast<size_t>(j)];
  }
  return true;
}
