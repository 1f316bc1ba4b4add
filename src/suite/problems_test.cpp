// The real problems under problems/: every one loads, and its small and full sizes resolve
// at worlds 1, 2 and 4 (those within its world range).
#include <doctest/doctest.h>

#include "kf_build_paths.h"
#include "suite/cost.h"
#include "suite/instance.h"
#include "suite/problem.h"

TEST_CASE("suite: every problem under problems/ loads and resolves") {
  std::vector<suite::Problem> problems;
  std::string err;
  CHECK_MESSAGE(suite::load_all_problems(KF_SOURCE_ROOT "/problems", &problems, &err), err);
  CHECK_FALSE(problems.empty());
  suite::Machine m = suite::default_h200();
  for (const suite::Problem& p : problems) {
    for (const char* size : {"small", "full"})
      for (int world : {1, 2, 4}) {
        if (world < p.world_min || world > p.world_max) continue;
        suite::Instance inst;
        CHECK_MESSAGE(suite::resolve_instance(p, world, size, {}, &inst, &err), err);
        suite::Roofline r = suite::roofline(inst, m);
        CHECK(r.floor_ms >= 0);
        CHECK((world == 1 || r.comm_ms > 0 || r.hbm_ms > 0 || r.compute_ms > 0));
      }
  }
}
