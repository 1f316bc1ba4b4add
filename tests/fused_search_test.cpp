// tests/fused_search_test.cpp: the builtin template search on the fused GEMM + collective
// problems (gemm_reduce_scatter, all_gather_gemm) end to end on the host backend, through
// the real kforge binary and real mpirun ranks: `solve --model builtin` reaches a correct
// kernel from their search.json templates, `tune` walks them, and a problem folder without
// a search.json ends with a message that names the problem and the missing file.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "kf_build_paths.h"
#include "suite/test_util.h"
#include "tests/kforge_run.h"

namespace {

namespace fs = std::filesystem;
using kforge_run::Run;

// `kforge ARGS` with `env` in front, its stderr apart (through a file in `dir`).
Run kforge_in(const std::string& env, const std::string& args, const std::string& dir) {
  return kforge_run::kforge(args, env, dir + "/stderr");
}

using kforge_run::kRoot;
const char* const kFusedSearched[] = {"gemm_reduce_scatter", "all_gather_gemm"};

// The headless run's last JSON line with "event": "result" (null when there is none).
nlohmann::json result_of(const Run& r) {
  std::istringstream in(r.out);
  nlohmann::json last;
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == "result") last = j;
  }
  return last;
}

}  // namespace

TEST_CASE(
    "solve: --model builtin on the fused problems reaches a correct host kernel from search.json") {
  for (const char* p : kFusedSearched) {
    suite::test::TempDir dir;
    Run r = kforge_in("KFORGE_RUNS=" + dir.path + "/runs",
                      std::string("solve ") + p +
                          " --model builtin --backend host --world 2 --size small --headless "
                          "--max-turns 3 --out " +
                          dir.path + "/out",
                      dir.path);
    INFO(p << "\nstdout:\n" << r.out << "\nstderr:\n" << r.err);
    CHECK(r.code == 0);
    const nlohmann::json res = result_of(r);
    REQUIRE(res.is_object());
    CHECK(res["target_met"] == true);  // host: correct is enough
    std::ifstream vin(dir.path + "/out/verdict.json");
    REQUIRE(vin);
    const nlohmann::json v = nlohmann::json::parse(vin);
    CHECK(v["status"] == "correct");
    std::ifstream kin(res["kernel"].get<std::string>());
    std::stringstream kernel;
    kernel << kin.rdbuf();
    // The builtin's kernel is one of the problem's host templates.
    CHECK(kernel.str().rfind(std::string("// kforge template ") + p + " host/", 0) == 0);
  }
}

TEST_CASE("tune: all_gather_gemm walks its host templates and writes a correct best") {
  suite::test::TempDir dir;
  const std::string best = dir.path + "/best.cpp";
  Run r = kforge_in("KFORGE_RUNS=" + dir.path + "/runs",
                    "tune all_gather_gemm --backend host --world 2 --size small --budget 2 --json "
                    "--out " +
                        best,
                    dir.path);
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["trials"].size() == 2);
  REQUIRE(j["best"].is_object());
  CHECK(j["best"]["status"] == "correct");
}

TEST_CASE(
    "solve: --model builtin on a problem without search.json says so, naming the problem and "
    "file") {
  suite::test::TempDir dir;
  // A copy of the problem's folder without its search.json: no templates to search.
  const std::string root = dir.path + "/problems";
  fs::create_directories(root);
  fs::copy(kRoot + "/problems/gemm_reduce_scatter", root + "/gemm_reduce_scatter",
           fs::copy_options::recursive);
  fs::remove(root + "/gemm_reduce_scatter/search.json");
  Run r = kforge_in("KFORGE_RUNS=" + dir.path + "/runs KFORGE_PROBLEMS=" + root,
                    "solve gemm_reduce_scatter --model builtin --backend host --world 2 --size "
                    "small --headless --out " +
                        dir.path + "/out",
                    dir.path);
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
  CHECK(r.code == 2);  // not the builtin's failure: the problem is one it cannot write
  const std::string all = r.out + r.err;
  CHECK(all.find("problem gemm_reduce_scatter is not supported by the builtin") !=
        std::string::npos);
  CHECK(all.find(root + "/gemm_reduce_scatter/search.json is missing") != std::string::npos);
  // What a sweep reads: solve.error says why there is no outcome (sweep/outcome.h).
  std::ifstream in(dir.path + "/out/verdict.json");
  const nlohmann::json v = nlohmann::json::parse(in, nullptr, false);
  REQUIRE(v.is_object());
  CHECK(v["solve"]["error"] == "builtin_unsupported");
}
