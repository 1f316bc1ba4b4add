// all_gather: y is every rank's x laid end to end in rank order.
#include "kf/oracle.h"

#include <string>

KF_ORACLE(all_gather) {
  std::vector<double>& y = io.out("y");
  const size_t n = io.input("x", 0).size();
  if (y.size() != n * static_cast<size_t>(io.world)) {
    *err = "all_gather: y has " + std::to_string(y.size()) +
           " elements, want world * |x| = " + std::to_string(n * static_cast<size_t>(io.world));
    return false;
  }
  for (int r = 0; r < io.world; ++r) {
    const std::vector<double>& x = io.input("x", r);
    if (x.size() != n) {
      *err = "all_gather: rank " + std::to_string(r) + "'s x has " + std::to_string(x.size()) +
             " elements, rank 0's has " + std::to_string(n) + ": they must be equal";
      return false;
    }
    for (size_t i = 0; i < n; ++i) y[static_cast<size_t>(r) * n + i] = x[i];
  }
  return true;
}
