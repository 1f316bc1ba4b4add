// tests/sweep_builtin_test.cpp: `kforge sweep all --model builtin`, the model-free sweep a
// person runs first, on the host backend: the builtin template search answers every
// problem that has an expert kernel (a search.json) with a correct kernel, and a problem
// without one is "not supported by the builtin", kept out of the metrics and named, never a
// failed sample. Problems are found by listing problems/, as tests/problems_test.cpp does.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "kf_build_paths.h"
#include "tests/solve_harness.h"
#include "tests/sweep_script.h"

namespace {

namespace fs = std::filesystem;
using solve_test::Harness;
using solve_test::json;

// Problem folders, split by whether they have a search.json (the builtin's templates).
void problem_folders(std::set<std::string>* with, std::set<std::string>* without) {
  for (const auto& e : fs::directory_iterator(std::string(KF_SOURCE_ROOT) + "/problems")) {
    if (!fs::exists(e.path() / "problem.json")) continue;
    (fs::exists(e.path() / "search.json") ? with : without)->insert(e.path().filename());
  }
}

}  // namespace

TEST_CASE("sweep: the builtin over every problem on the host backend, no failed sample" *
          doctest::timeout(900)) {
  std::set<std::string> searchable, unsupported;
  problem_folders(&searchable, &unsupported);
  REQUIRE(!searchable.empty());
  Harness h;
  const std::string out = h.dir() + "/sweep";
  std::string text;
  int code = h.kforge(
      {"sweep", "all", "--model", "builtin", "--samples", "1", "--jobs", "2", "--max-turns", "4",
       "--backend", "host", "--world", "2", "--size", "small", "--no-time", "--out", out},
      &text, 800);
  INFO(text);
  REQUIRE(code == 0);
  json st = sweep_script::status(h, out);
  INFO(st.dump(2));
  CHECK(st["failed"] == 0);
  CHECK(st["done"] == searchable.size());
  for (const std::string& p : searchable) {
    INFO(p);
    CHECK(sweep_script::row(st, p)["correct"] == 1);
  }
  std::set<std::string> named;
  for (const auto& [p, why] : st["not_runnable_problems"].items()) {
    named.insert(p);
    CHECK(why.get<std::string>().find("not supported by the builtin") != std::string::npos);
  }
  CHECK(named == unsupported);
}
