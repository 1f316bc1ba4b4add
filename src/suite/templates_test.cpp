// suite/templates_test.cpp: the template space of every shipped problem, instantiation,
// and that instantiated templates still compile (two with nvcc, the host ones with g++).
#include "suite/templates.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "kf_build_paths.h"
#include "suite/instance.h"
#include "suite/test_util.h"

namespace {

suite::Problem load(const std::string& name) {
  suite::Problem p;
  std::string err;
  REQUIRE_MESSAGE(suite::load_problem(std::string(KF_SOURCE_ROOT) + "/problems/" + name, &p, &err),
                  err);
  return p;
}

suite::Instance full(const suite::Problem& p, int world) {
  suite::Instance inst;
  std::string err;
  REQUIRE_MESSAGE(suite::resolve_instance(p, world, "full", {}, &inst, &err), err);
  return inst;
}

std::set<std::string> families(const std::vector<suite::Template>& space) {
  std::set<std::string> f;
  for (const auto& t : space) f.insert(t.family());
  return f;
}

int run(const std::string& cmd) {
  return std::system((cmd + " > /dev/null 2>&1").c_str());
}

const char* const kProblems[] = {"all_reduce", "reduce_scatter", "all_gather", "all_to_all",
                                 "broadcast"};

}  // namespace

TEST_CASE("builtin: every problem has a template space whose sources exist and names are unique") {
  for (const char* name : kProblems) {
    suite::Problem p = load(name);
    for (sandbox::Backend backend : {sandbox::Backend::cuda, sandbox::Backend::host}) {
      auto space = suite::template_space(p, full(p, 2), backend);
      INFO(name << " " << sandbox::backend_name(backend));
      REQUIRE(!space.empty());
      std::set<std::string> names;
      for (const auto& t : space) {
        CHECK(std::filesystem::exists(p.dir + "/" + t.source));
        CHECK(t.backend == backend);
        names.insert(t.name());
      }
      CHECK(names.size() == space.size());
    }
  }
}

TEST_CASE("builtin: the spaces expose the expert kernels' free choices") {
  suite::Problem ar = load("all_reduce");
  CHECK(families(suite::template_space(ar, full(ar, 2), sandbox::Backend::cuda)) ==
        std::set<std::string>{"reg/one_shot", "reg/two_shot"});
  suite::Problem ag = load("all_gather");
  auto ag_space = suite::template_space(ag, full(ag, 2), sandbox::Backend::cuda);
  CHECK(families(ag_space) == std::set<std::string>{"tma/push", "reg/push", "ce/push"});
  for (const auto& t : ag_space) {
    if (t.mech == "ce") CHECK(t.source == "solution_ce.cu");
    if (t.mech == "tma") CHECK(t.chunk > 0);
  }
  suite::Problem bc = load("broadcast");
  CHECK(families(suite::template_space(bc, full(bc, 4), sandbox::Backend::cuda)) ==
        std::set<std::string>{"reg/pull", "reg/relay", "ce/pull"});
  CHECK(families(suite::template_space(bc, full(bc, 2), sandbox::Backend::host)) ==
        std::set<std::string>{"host/pull", "host/push"});
}

TEST_CASE("builtin: TMA tiles larger than the message are left out") {
  suite::Problem ag = load("all_gather");
  suite::Instance inst;
  std::string err;
  REQUIRE(suite::resolve_instance(ag, 2, "full", {"n=2048"}, &inst, &err));  // 8 KB of x
  for (const auto& t : suite::template_space(ag, inst, sandbox::Backend::cuda))
    if (t.mech == "tma") CHECK(t.chunk <= 8192);
}

TEST_CASE("builtin: instantiate prepends a naming comment and the defines in order") {
  suite::Template t;
  t.problem = "all_reduce";
  t.source = "solution.cu";
  t.mech = "reg";
  t.algo = "two_shot";
  t.blocks = 64;
  t.macros = {{"KF_ALGO", "two_shot"}, {"KF_BLOCKS", "64"}};
  const std::string text = suite::instantiate(t, "BODY\n");
  CHECK(text.rfind("// kforge template all_reduce reg/two_shot blocks=64", 0) == 0);
  const size_t a = text.find("#define KF_ALGO two_shot\n"), b = text.find("#define KF_BLOCKS 64\n");
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  CHECK(a < b);
  CHECK(text.substr(text.size() - 5) == "BODY\n");

  suite::Problem p = load("all_reduce");
  std::string out, err;
  t.source = "no_such.cu";
  CHECK_FALSE(suite::instantiate_file(p, t, &out, &err));
  CHECK(err.find("no_such.cu") != std::string::npos);
}

TEST_CASE("builtin: host templates compile with g++ for every knob value") {
  suite::test::TempDir dir;
  for (const char* name : kProblems) {
    suite::Problem p = load(name);
    for (const auto& t : suite::template_space(p, full(p, 2), sandbox::Backend::host)) {
      if (t.chunk != 1000) continue;  // the knob values the compiler sees differ only here
      std::string text, err;
      REQUIRE(suite::instantiate_file(p, t, &text, &err));
      const std::string src = dir.path + "/" + name + "-" + t.algo + ".cpp";
      suite::test::write_file(src, text);
      INFO(src);
      CHECK(run("g++ -std=c++20 -O0 -fsyntax-only -Wall -Wextra -Werror -I " KF_SOURCE_ROOT
                "/primitives/include " +
                src) == 0);
    }
  }
}

TEST_CASE("builtin: two CUDA templates compile with nvcc") {
  if (!std::filesystem::exists(KF_NVCC)) {
    MESSAGE("no nvcc at " KF_NVCC ": skipped");
    return;
  }
  suite::test::TempDir dir;
  struct Want {
    const char* problem;
    const char* name;
  };
  for (Want w : {Want{"all_reduce", "reg/two_shot blocks=128 threads=256"},
                 Want{"all_gather", "reg/push blocks=8 threads=512"}}) {
    suite::Problem p = load(w.problem);
    const suite::Template* found = nullptr;
    auto space = suite::template_space(p, full(p, 2), sandbox::Backend::cuda);
    for (const auto& t : space)
      if (t.name() == w.name) found = &t;
    REQUIRE_MESSAGE(found, w.name);
    std::string text, err;
    REQUIRE(suite::instantiate_file(p, *found, &text, &err));
    const std::string src = dir.path + "/" + w.problem + ".cu";
    suite::test::write_file(src, text);
    CHECK_MESSAGE(run(std::string(KF_NVCC) +
                      " -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC "
                      "-cudart shared -I " KF_SOURCE_ROOT "/primitives/include -o " +
                      dir.path + "/k.so " + src) == 0,
                  w.name);
  }
}
