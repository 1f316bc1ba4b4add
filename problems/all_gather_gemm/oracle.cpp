// all_gather_gemm: rank r's c = [a(0) | a(1) | ... ] @ b(r): the ranks' a [M, K/w] laid side
// by side along k make the [M, K] left operand; b(r) [K, N] is rank r's own.
#include "kf/oracle.h"

#include <string>

KF_ORACLE(all_gather_gemm) {
  std::vector<double>& c = io.out("c");
  const std::vector<int64_t>& sa = io.shape("a", 0);
  const std::vector<int64_t>& sb = io.shape("b", io.rank);
  if (sa.size() != 2 || sb.size() != 2 || sb[0] != sa[1] * io.world) {
    *err = "all_gather_gemm: a is not [M, Kl] and b not [world * Kl, N]";
    return false;
  }
  const int64_t m = sa[0], kl = sa[1], n = sb[1];
  for (int r = 0; r < io.world; ++r)
    if (io.shape("a", r) != sa || io.input("a", r).size() != static_cast<size_t>(m * kl)) {
      *err = "all_gather_gemm: rank " + std::to_string(r) +
             "'s a differs in shape from rank 0's; every rank holds [M, K/world]";
      return false;
    }
  const std::vector<double>& b = io.input("b", io.rank);
  if (b.size() != static_cast<size_t>(sb[0] * n) || c.size() != static_cast<size_t>(m * n)) {
    *err = "all_gather_gemm: c has " + std::to_string(c.size()) +
           " elements, want M * N = " + std::to_string(m) + " * " + std::to_string(n);
    return false;
  }
  for (double& v : c) v = 0;
  for (int s = 0; s < io.world; ++s) {
    const std::vector<double>& a = io.input("a", s);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t k = 0; k < kl; ++k) {
        const double aik = a[static_cast<size_t>(i * kl + k)];
        const double* brow = &b[static_cast<size_t>((s * kl + k) * n)];
        double* crow = &c[static_cast<size_t>(i * n)];
        for (int64_t j = 0; j < n; ++j) crow[j] += aik * brow[j];
      }
  }
  return true;
}
