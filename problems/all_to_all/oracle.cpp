// all_to_all: chunk s of rank r's y is chunk r of rank s's x (world chunks of n elements).
#include "kf/oracle.h"

#include <string>

KF_ORACLE(all_to_all) {
  std::vector<double>& y = io.out("y");
  const size_t w = static_cast<size_t>(io.world);
  if (y.size() % w != 0) {
    *err = "all_to_all: y has " + std::to_string(y.size()) +
           " elements, not a multiple of world = " + std::to_string(w);
    return false;
  }
  const size_t n = y.size() / w;
  const size_t me = static_cast<size_t>(io.rank);
  for (int s = 0; s < io.world; ++s) {
    const std::vector<double>& x = io.input("x", s);
    if (x.size() != y.size()) {
      *err = "all_to_all: rank " + std::to_string(s) + "'s x has " + std::to_string(x.size()) +
             " elements, y has " + std::to_string(y.size()) + ": they must be equal";
      return false;
    }
    for (size_t i = 0; i < n; ++i) y[static_cast<size_t>(s) * n + i] = x[me * n + i];
  }
  return true;
}
