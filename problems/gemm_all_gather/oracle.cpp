// gemm_all_gather: every rank's c = [a(0) @ b(0) | a(1) @ b(1) | ... ]: rank s's product
// a(s) [M, K] @ b(s) [K, N/w] fills columns s*N/w to (s+1)*N/w - 1 of the [M, N] output.
#include "kf/oracle.h"

#include <string>

namespace {

// The shapes every rank must share: a [M, K], b [K, Nl], and c [M, world * Nl] here.
bool dims(const sandbox::OracleIO& io, size_t c_size, int64_t* m, int64_t* k, int64_t* nl,
          std::string* err) {
  const std::vector<int64_t>& sa = io.shape("a", 0);
  const std::vector<int64_t>& sb = io.shape("b", 0);
  if (sa.size() != 2 || sb.size() != 2 || sa[1] != sb[0]) {
    *err = "gemm_all_gather: rank 0's a and b are not [M, K] and [K, N/world] matrices";
    return false;
  }
  *m = sa[0], *k = sa[1], *nl = sb[1];
  for (int r = 0; r < io.world; ++r)
    if (io.shape("a", r) != sa || io.shape("b", r) != sb ||
        io.input("a", r).size() != static_cast<size_t>(*m * *k) ||
        io.input("b", r).size() != static_cast<size_t>(*k * *nl)) {
      *err = "gemm_all_gather: rank " + std::to_string(r) +
             "'s a or b differs in shape from rank 0's; every rank holds [M, K] and [K, N/world]";
      return false;
    }
  if (c_size != static_cast<size_t>(*m * *nl * io.world)) {
    *err = "gemm_all_gather: c has " + std::to_string(c_size) +
           " elements, want M * N = " + std::to_string(*m) + " * " + std::to_string(*nl * io.world);
    return false;
  }
  return true;
}

}  // namespace

KF_ORACLE(gemm_all_gather) {
  std::vector<double>& c = io.out("c");
  int64_t m, k, nl;
  if (!dims(io, c.size(), &m, &k, &nl, err)) return false;
  const int64_t n = nl * io.world;
  for (double& v : c) v = 0;
  // Rank s's piece goes into its column block of every row: row i of c starts at i * n,
  // and the piece's columns at s * nl within it.
  for (int s = 0; s < io.world; ++s) {
    const std::vector<double>& a = io.input("a", s);
    const std::vector<double>& b = io.input("b", s);
    for (int64_t i = 0; i < m; ++i) {
      double* crow = &c[static_cast<size_t>(i * n + s * nl)];
      for (int64_t kk = 0; kk < k; ++kk) {
        const double aik = a[static_cast<size_t>(i * k + kk)];
        const double* brow = &b[static_cast<size_t>(kk * nl)];
        for (int64_t j = 0; j < nl; ++j) crow[j] += aik * brow[j];
      }
    }
  }
  return true;
}
