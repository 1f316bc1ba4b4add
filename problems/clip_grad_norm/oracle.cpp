// clip_grad_norm: the global 2-norm of every rank's g0, g1, g2 (the square root of the sum
// of all their squares), and this rank's gradients scaled by max_norm / norm when the norm
// exceeds max_norm (else unchanged).
#include "kf/oracle.h"

#include <cmath>
#include <string>

namespace {

constexpr const char* kGrads[3] = {"g0", "g1", "g2"};
constexpr const char* kOuts[3] = {"y0", "y1", "y2"};

// Every rank's g0..g2 must be M * N long, M and N from this rank's y0.
bool dims(const sandbox::OracleIO& io, size_t* numel, std::string* err) {
  const std::vector<int64_t>& sy = io.shape("y0", io.rank);
  if (sy.size() != 2) {
    *err = "clip_grad_norm: y0 is not an [M, N] matrix";
    return false;
  }
  *numel = static_cast<size_t>(sy[0] * sy[1]);
  for (int r = 0; r < io.world; ++r)
    for (const char* g : kGrads)
      if (io.input(g, r).size() != *numel) {
        *err = "clip_grad_norm: rank " + std::to_string(r) + "'s " + g + " has " +
               std::to_string(io.input(g, r).size()) +
               " elements, want M * N = " + std::to_string(*numel);
        return false;
      }
  return true;
}

}  // namespace

KF_ORACLE(clip_grad_norm) {
  size_t numel;
  if (!dims(io, &numel, err)) return false;
  double squares = 0;  // over every rank and tensor
  for (int r = 0; r < io.world; ++r)
    for (const char* g : kGrads)
      for (double v : io.input(g, r)) squares += v * v;
  const double norm = std::sqrt(squares);
  const double max_norm = io.param("max_norm", 1.0);
  const double coef = norm > max_norm ? max_norm / norm : 1.0;
  for (int k = 0; k < 3; ++k) {
    const std::vector<double>& g = io.input(kGrads[k], io.rank);
    std::vector<double>& y = io.out(kOuts[k]);
    for (size_t e = 0; e < numel; ++e) y[e] = g[e] * coef;
  }
  io.out("norm")[0] = norm;
  return true;
}
