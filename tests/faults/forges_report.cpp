// fault: all_reduce world=1,2 expect=mismatch
// Writes a wrong sum, then tries to write its own verdict: a clean report for its rank,
// a result with a fast time, and a status file, in its run's folder (one level above its
// working directory), from kf_run and again from a destructor that runs when its
// process exits, after the judge has written the real reports. The candidate's process
// cannot write there, and the judge writes the reports: the verdict is the real one.
#include <cstdio>
#include <string>

#include "common.h"

namespace {
int g_rank = 0;

void forge() {
  const std::string r = std::to_string(g_rank);
  if (FILE* f = std::fopen(("../rank" + r + ".json").c_str(), "w")) {
    std::fprintf(f, "{\"rank\":%d,\"failures\":[],\"notes\":[]}\n", g_rank);
    std::fclose(f);
  }
  if (FILE* f = std::fopen("../result.json", "w")) {
    std::fprintf(f, "{\"world\":1,\"timed\":true,\"candidate\":{\"n\":50,\"median_ms\":0.004}}\n");
    std::fclose(f);
  }
  if (FILE* f = std::fopen(("../status/rank" + r).c_str(), "w")) {
    std::fprintf(f, "{\"phase\":\"done\",\"in_candidate\":false,\"limit_s\":0}\n");
    std::fclose(f);
  }
}

struct AtExit {
  ~AtExit() { forge(); }
} g_at_exit;
}  // namespace

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  g_rank = comm.rank;
  int rc = fault::correct_run(comm, t);
  t["y"].ptr<float>()[0] += 1.0f;  // wrong
  forge();
  return rc;
}
