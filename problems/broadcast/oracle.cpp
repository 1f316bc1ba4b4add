// broadcast: every rank's y is the root's x.
#include "kf/oracle.h"

#include <string>

KF_ORACLE(broadcast) {
  const int64_t root = io.iparam("root", 0);
  if (root < 0 || root >= io.world) {
    *err = "broadcast: root = " + std::to_string(root) + " is not a rank of a world of " +
           std::to_string(io.world) + ": set the root parameter to 0 .. world-1";
    return false;
  }
  const std::vector<double>& x = io.input("x", static_cast<int>(root));
  std::vector<double>& y = io.out("y");
  if (x.size() != y.size()) {
    *err = "broadcast: the root's x has " + std::to_string(x.size()) + " elements, y has " +
           std::to_string(y.size()) + ": they must be equal";
    return false;
  }
  for (size_t i = 0; i < y.size(); ++i) y[i] = x[i];
  return true;
}
