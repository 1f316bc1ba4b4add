// reduce_scatter: rank r's y is the sum over ranks of chunk r of x (chunks of n = |y|).
#include "kf/oracle.h"

#include <string>

KF_ORACLE(reduce_scatter) {
  std::vector<double>& y = io.out("y");
  const size_t n = y.size();
  const size_t want = n * static_cast<size_t>(io.world);
  for (int r = 0; r < io.world; ++r) {
    if (io.input("x", r).size() != want) {
      *err = "reduce_scatter: rank " + std::to_string(r) + "'s x has " +
             std::to_string(io.input("x", r).size()) +
             " elements, want world * |y| = " + std::to_string(want);
      return false;
    }
  }
  const size_t off = static_cast<size_t>(io.rank) * n;
  for (size_t i = 0; i < n; ++i) y[i] = 0;
  for (int r = 0; r < io.world; ++r) {
    const std::vector<double>& x = io.input("x", r);
    for (size_t i = 0; i < n; ++i) y[i] += x[off + i];
  }
  return true;
}
