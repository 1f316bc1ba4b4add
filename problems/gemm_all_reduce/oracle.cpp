// gemm_all_reduce: every rank's c is sum over ranks s of a(s) @ b(s), with a(s) [M, K] and
// b(s) [K, N] row-major (the whole K on every rank).
#include "kf/oracle.h"

#include <string>

namespace {

// The shapes every rank must share: a [M, K], b [K, N], and c [M, N] here.
bool dims(const sandbox::OracleIO& io, size_t c_size, int64_t* m, int64_t* k, int64_t* n,
          std::string* err) {
  const std::vector<int64_t>& sa = io.shape("a", 0);
  const std::vector<int64_t>& sb = io.shape("b", 0);
  if (sa.size() != 2 || sb.size() != 2 || sa[1] != sb[0]) {
    *err = "gemm_all_reduce: rank 0's a and b are not [M, K] and [K, N] matrices";
    return false;
  }
  *m = sa[0], *k = sa[1], *n = sb[1];
  for (int r = 0; r < io.world; ++r)
    if (io.shape("a", r) != sa || io.shape("b", r) != sb ||
        io.input("a", r).size() != static_cast<size_t>(*m * *k) ||
        io.input("b", r).size() != static_cast<size_t>(*k * *n)) {
      *err = "gemm_all_reduce: rank " + std::to_string(r) +
             "'s a or b differs in shape from rank 0's; every rank holds [M, K] and [K, N]";
      return false;
    }
  if (c_size != static_cast<size_t>(*m * *n)) {
    *err = "gemm_all_reduce: c has " + std::to_string(c_size) +
           " elements, want M * N = " + std::to_string(*m) + " * " + std::to_string(*n);
    return false;
  }
  return true;
}

}  // namespace

KF_ORACLE(gemm_all_reduce) {
  std::vector<double>& c = io.out("c");
  int64_t m, k, n;
  if (!dims(io, c.size(), &m, &k, &n, err)) return false;
  for (double& v : c) v = 0;
  // Every rank's check sums world whole GEMMs (8 of them per chained check pass), so
  // rows go in blocks of 8: each row of b is read once per block rather than once per
  // row of c, which halves the time at the full size.
  constexpr int64_t kRows = 8;
  for (int s = 0; s < io.world; ++s) {
    const std::vector<double>& a = io.input("a", s);
    const std::vector<double>& b = io.input("b", s);
    for (int64_t i0 = 0; i0 < m; i0 += kRows)
      for (int64_t kk = 0; kk < k; ++kk) {
        const double* brow = &b[static_cast<size_t>(kk * n)];
        for (int64_t i = i0; i < m && i < i0 + kRows; ++i) {
          const double aik = a[static_cast<size_t>(i * k + kk)];
          double* crow = &c[static_cast<size_t>(i * n)];
          for (int64_t j = 0; j < n; ++j) crow[j] += aik * brow[j];
        }
      }
  }
  return true;
}
