// all_reduce: y = the elementwise sum of every rank's x.
#include "kf/oracle.h"

#include <string>

KF_ORACLE(all_reduce) {
  const size_t n = io.out("y").size();
  for (int r = 0; r < io.world; ++r) {
    if (io.input("x", r).size() != n) {
      *err = "all_reduce: rank " + std::to_string(r) + "'s x has " +
             std::to_string(io.input("x", r).size()) + " elements, y has " + std::to_string(n) +
             ": every rank's x must be as long as y";
      return false;
    }
  }
  std::vector<double>& y = io.out("y");
  for (size_t i = 0; i < n; ++i) y[i] = 0;
  // Summed in rank order in double: exact enough that the tolerance is all the candidate's.
  for (int r = 0; r < io.world; ++r) {
    const std::vector<double>& x = io.input("x", r);
    for (size_t i = 0; i < n; ++i) y[i] += x[i];
  }
  return true;
}
