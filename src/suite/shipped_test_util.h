// suite/shipped_test_util.h: the shipped problems (problems/<name>) as the suite's tests
// load them: the folder, an instance of its full size, one template of a space by name.
// Each fails the calling test case with the loader's message.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kf_build_paths.h"
#include "suite/instance.h"
#include "suite/problem.h"
#include "suite/templates.h"

namespace suite::test {

inline Problem shipped_problem(const std::string& name) {
  Problem p;
  std::string err;
  REQUIRE_MESSAGE(load_problem(std::string(KF_SOURCE_ROOT) + "/problems/" + name, &p, &err), err);
  return p;
}

inline Instance full_instance(const Problem& p, int world, std::vector<std::string> over = {}) {
  Instance inst;
  std::string err;
  REQUIRE_MESSAGE(resolve_instance(p, world, "full", over, &inst, &err), err);
  return inst;
}

inline Template template_named(const std::vector<Template>& space, const std::string& name) {
  for (const auto& t : space)
    if (t.name() == name) return t;
  FAIL("no template " << name);
  return {};
}

}  // namespace suite::test
