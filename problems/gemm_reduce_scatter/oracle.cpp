// gemm_reduce_scatter: rank r's c is rows [r*M/w, (r+1)*M/w) of sum over ranks s of
// a(s) @ b(s), with a(s) [M, K/w] and b(s) [K/w, N] row-major.
#include "kf/oracle.h"

#include <string>

namespace {

// The shapes every rank must share: a [M, Kl], b [Kl, N], and c [M / world, N] here.
bool dims(const sandbox::OracleIO& io, size_t c_size, int64_t* m, int64_t* kl, int64_t* n,
          std::string* err) {
  const std::vector<int64_t>& sa = io.shape("a", 0);
  const std::vector<int64_t>& sb = io.shape("b", 0);
  if (sa.size() != 2 || sb.size() != 2 || sa[1] != sb[0]) {
    *err = "gemm_reduce_scatter: rank 0's a and b are not [M, Kl] and [Kl, N] matrices";
    return false;
  }
  *m = sa[0], *kl = sa[1], *n = sb[1];
  for (int r = 0; r < io.world; ++r)
    if (io.shape("a", r) != sa || io.shape("b", r) != sb ||
        io.input("a", r).size() != static_cast<size_t>(*m * *kl) ||
        io.input("b", r).size() != static_cast<size_t>(*kl * *n)) {
      *err = "gemm_reduce_scatter: rank " + std::to_string(r) +
             "'s a or b differs in shape from rank 0's; every rank holds [M, K/world] and "
             "[K/world, N]";
      return false;
    }
  if (*m % io.world != 0 || c_size != static_cast<size_t>(*m / io.world * *n)) {
    *err = "gemm_reduce_scatter: c has " + std::to_string(c_size) +
           " elements, want M / world * N = " + std::to_string(*m) + " / " +
           std::to_string(io.world) + " * " + std::to_string(*n);
    return false;
  }
  return true;
}

}  // namespace

KF_ORACLE(gemm_reduce_scatter) {
  std::vector<double>& c = io.out("c");
  int64_t m, kl, n;
  if (!dims(io, c.size(), &m, &kl, &n, err)) return false;
  const int64_t rows = m / io.world, row0 = io.rank * rows;
  for (double& v : c) v = 0;
  for (int s = 0; s < io.world; ++s) {
    const std::vector<double>& a = io.input("a", s);
    const std::vector<double>& b = io.input("b", s);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t k = 0; k < kl; ++k) {
        const double aik = a[static_cast<size_t>((row0 + i) * kl + k)];
        const double* brow = &b[static_cast<size_t>(k * n)];
        double* crow = &c[static_cast<size_t>(i * n)];
        for (int64_t j = 0; j < n; ++j) crow[j] += aik * brow[j];
      }
  }
  return true;
}
