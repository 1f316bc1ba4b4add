// ulysses_all_to_all: rank r's y [M/w, w*N] holds, at columns s*N .. s*N + N - 1, rows
// r*M/w .. (r+1)*M/w - 1 of rank s's x [M, N]: y(r)[i][s*N + j] = x(s)[r*M/w + i][j].
#include "kf/oracle.h"

#include <string>

namespace {

// Every rank's x must be [M, N] with M a multiple of world, and y [M / world, world * N].
bool dims(const sandbox::OracleIO& io, size_t y_size, int64_t* m, int64_t* n, std::string* err) {
  const std::vector<int64_t>& sx = io.shape("x", 0);
  if (sx.size() != 2) {
    *err = "ulysses_all_to_all: rank 0's x is not an [M, N] matrix";
    return false;
  }
  *m = sx[0], *n = sx[1];
  for (int r = 0; r < io.world; ++r)
    if (io.shape("x", r) != sx || io.input("x", r).size() != static_cast<size_t>(*m * *n)) {
      *err = "ulysses_all_to_all: rank " + std::to_string(r) +
             "'s x differs in shape from rank 0's; every rank holds [M, N]";
      return false;
    }
  if (*m % io.world != 0) {
    *err = "ulysses_all_to_all: M = " + std::to_string(*m) +
           " is not a multiple of world = " + std::to_string(io.world);
    return false;
  }
  if (y_size != static_cast<size_t>(*m * *n)) {
    *err = "ulysses_all_to_all: y has " + std::to_string(y_size) +
           " elements, want M / world * world * N = " + std::to_string(*m * *n);
    return false;
  }
  return true;
}

}  // namespace

KF_ORACLE(ulysses_all_to_all) {
  std::vector<double>& y = io.out("y");
  int64_t m, n;
  if (!dims(io, y.size(), &m, &n, err)) return false;
  const int64_t w = io.world, rows = m / w, row0 = io.rank * rows;
  for (int s = 0; s < io.world; ++s) {
    const std::vector<double>& x = io.input("x", s);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < n; ++j)
        y[static_cast<size_t>(i * w * n + s * n + j)] = x[static_cast<size_t>((row0 + i) * n + j)];
  }
  return true;
}
