// reduce: the root's y is the elementwise sum of every rank's x; every other rank's y is
// its own x (ParallelKernelBench reduces a clone of the input in place, so the non-root
// clones keep their input).
#include "kf/oracle.h"

#include <string>

namespace {

// The root parameter names a rank of this world; *err says how to fix it otherwise.
bool check_root(const sandbox::OracleIO& io, int64_t root, std::string* err) {
  if (root >= 0 && root < io.world) return true;
  *err = "reduce: root = " + std::to_string(root) + " is not a rank of a world of " +
         std::to_string(io.world) + ": set the root parameter to 0 .. world-1";
  return false;
}

// Every rank's x has as many elements as y (the shapes are the same on every rank).
bool check_sizes(const sandbox::OracleIO& io, size_t n, std::string* err) {
  for (int r = 0; r < io.world; ++r) {
    const size_t got = io.input("x", r).size();
    if (got == n) continue;
    *err = "reduce: rank " + std::to_string(r) + "'s x has " + std::to_string(got) +
           " elements, y has " + std::to_string(n) + ": every rank's x must be as large as y";
    return false;
  }
  return true;
}

}  // namespace

KF_ORACLE(reduce) {
  const int64_t root = io.iparam("root", 0);
  std::vector<double>& y = io.out("y");
  if (!check_root(io, root, err) || !check_sizes(io, y.size(), err)) return false;
  if (io.rank != root) {
    const std::vector<double>& x = io.input("x", io.rank);
    for (size_t i = 0; i < y.size(); ++i) y[i] = x[i];
    return true;
  }
  for (size_t i = 0; i < y.size(); ++i) y[i] = 0;
  // Summed in rank order in double: exact enough that the tolerance is all the candidate's.
  for (int r = 0; r < io.world; ++r) {
    const std::vector<double>& x = io.input("x", r);
    for (size_t i = 0; i < y.size(); ++i) y[i] += x[i];
  }
  return true;
}
