// fault: all_reduce world=2 expect=correct timed
// Remembers the output of every input it has seen (a speed cheat on a GPU when timed
// inputs repeat) and logs a hash of each call's x to inputs.log in its scratch
// directory; the suite checks that no timed call saw inputs seen before.
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "common.h"

namespace {
std::map<uint64_t, std::vector<float>> g_seen;
uint64_t hash_of(const kf::Tensor& x) {
  uint64_t h = 1469598103934665603ull;
  const unsigned char* p = static_cast<const unsigned char*>(x.data);
  for (size_t i = 0; i < x.bytes(); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
}  // namespace

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const uint64_t h = hash_of(t["x"]);
  float* y = t["y"].ptr<float>();
  const bool hit = g_seen.count(h) > 0;
  if (comm.rank == 0)
    if (FILE* f = std::fopen("inputs.log", "a")) {
      std::fprintf(f, "%016llx %s\n", static_cast<unsigned long long>(h), hit ? "repeat" : "new");
      std::fclose(f);
    }
  fault::correct_run(comm, t);
  if (!hit) g_seen[h].assign(y, y + t["y"].numel);
  return 0;
}
