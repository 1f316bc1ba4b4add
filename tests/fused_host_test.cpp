// tests/fused_host_test.cpp: the fused GEMM + collective problems (gemm_reduce_scatter,
// all_gather_gemm) end to end on the host backend, as a user runs them: the real kforge
// binary, real mpirun ranks, the expert host kernels held against their double-precision
// oracles, and the sizes' constraints. (Their CUDA sources are compiled by cli_test and
// primitives_test; running them needs a GPU.)
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "kf_build_paths.h"
#include "sandbox/text.h"
#include "sandbox/verdict_read.h"
#include "suite/test_util.h"
#include "tests/kforge_run.h"

namespace {

namespace fs = std::filesystem;
using kforge_run::kforge;
using kforge_run::Run;
using kforge_run::status_of;

using kforge_run::kRoot;
const char* const kFused[] = {"gemm_reduce_scatter", "all_gather_gemm"};

// Writes `text` to a fresh file named `name` in a directory of this test's own, removed
// when the test binary exits.
std::string write_temp(const std::string& name, const std::string& text) {
  static const suite::test::TempDir dir;
  REQUIRE_FALSE(dir.path.empty());
  const std::string p = dir.path + "/" + name;
  std::ofstream(p) << text;
  return p;
}

std::string eval_args(const std::string& problem, const std::string& kernel, int world,
                      const std::string& size = "small") {
  return "eval " + problem + " " + kernel + " --backend host --world " + std::to_string(world) +
         " --size " + size + " --no-time --json";
}

}  // namespace

TEST_CASE("fused host: both host templates are correct, at the small and at PKB's size") {
  // (tests/problems_test.cpp holds every baseline and example to the oracle.)
  for (const char* p : kFused) {
    const std::string dir = kRoot + "/problems/" + p;
    for (const char* algo : {"pull", "push"}) {
      const std::string src = write_temp(std::string(p) + "_" + algo + ".cpp",
                                         std::string("#define KF_ALGO ") + algo + "\n" +
                                             sandbox::read_text(dir + "/solution_host.cpp"));
      for (int w : {2, 4}) {
        Run s = kforge(eval_args(p, src, w));
        CHECK_MESSAGE(status_of(s) == "correct", p, " ", algo, " world ", w, ": ", s.out);
      }
    }
    // PKB's size, held against the host baseline (the GPU checks full sizes the same way).
    Run full = kforge(eval_args(p, dir + "/solution_host.cpp", 2, "full"));
    CHECK_MESSAGE(status_of(full) == "correct", p, " full: ", full.out);
  }
}

TEST_CASE("fused host: a world the sizes do not divide is refused, naming the constraint") {
  // Both small sizes have K = 192, not a multiple of 8 * 5: every rank's shard of k must
  // be whole and 16-byte rows. (World 3 divides it: all_gather_gemm runs there, while
  // gemm_reduce_scatter's M = 200 does not split into 3 row blocks.)
  for (const char* p : kFused) {
    Run r = kforge(eval_args(p, kRoot + "/problems/" + p + "/examples/host.cpp", 5));
    CHECK_MESSAGE(r.code == 2, p, ": ", r.out);
    CHECK_MESSAGE(r.out.find("K % (8 * world) == 0") != std::string::npos, r.out);
    CHECK_MESSAGE(r.out.find("world=5") != std::string::npos, r.out);
  }
  Run odd = kforge(
      eval_args("all_gather_gemm", kRoot + "/problems/all_gather_gemm/examples/host.cpp", 3));
  CHECK_MESSAGE(status_of(odd) == "correct", odd.out);
  Run rows = kforge(eval_args("gemm_reduce_scatter",
                              kRoot + "/problems/gemm_reduce_scatter/examples/host.cpp", 3));
  CHECK(rows.code == 2);
  CHECK_MESSAGE(rows.out.find("M % world == 0") != std::string::npos, rows.out);
}
