// eval/eval_test.cpp: the sizes an evaluation runs by default, per backend, and a problem's
// "host" size standing in for its full one on the host backend only.
#include "eval/eval.h"

#include <doctest/doctest.h>

#include "suite/problem.h"
#include "suite/test_util.h"

namespace {

// A toy problem whose sizes are all_reduce's, plus a "host" one where `host_size` is set.
eval::EvalConfig toy(const suite::test::TempDir& tmp, bool host_size, sandbox::Backend backend) {
  nlohmann::ordered_json j = suite::test::all_reduce_json();
  j["name"] = "toy";
  if (host_size) j["sizes"]["host"] = {{"n", 65536}};
  eval::EvalConfig cfg;
  std::string err;
  REQUIRE_MESSAGE(suite::load_problem(suite::test::write_problem(tmp.path, "toy", j.dump()),
                                      &cfg.problem, &err),
                  err);
  cfg.settings = sandbox::default_settings(backend);
  return cfg;
}

using Sizes = std::vector<std::string>;

}  // namespace

TEST_CASE("eval: a problem's host size stands in for full on the host backend only") {
  suite::test::TempDir tmp;
  eval::EvalConfig host = toy(tmp, true, sandbox::Backend::host);
  CHECK(eval::sizes_to_run(host, false) == Sizes{"small", "host"});
  CHECK(eval::sizes_to_run(host, true) == Sizes{"host"});
  host.settings.sizes = {"full"};  // the person's choice stands
  CHECK(eval::sizes_to_run(host, false) == Sizes{"full"});

  suite::test::TempDir tmp2;
  eval::EvalConfig cuda = toy(tmp2, true, sandbox::Backend::cuda);
  CHECK(eval::sizes_to_run(cuda, false) == Sizes{"small", "full"});
  suite::test::TempDir tmp3;
  eval::EvalConfig plain = toy(tmp3, false, sandbox::Backend::host);
  CHECK(eval::sizes_to_run(plain, false) == Sizes{"small", "full"});
}
