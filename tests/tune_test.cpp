// tests/tune_test.cpp: `kforge tune` end to end through the real binary on the host
// backend: the search evaluates templates in the sandbox and writes a correct best.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kf_build_paths.h"
#include "suite/test_util.h"

namespace {

// Runs `cmd`, returns its exit status and its stdout in *out.
int run(const std::string& cmd, std::string* out) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace

TEST_CASE("tune: all_reduce on the host backend finds and writes a correct best") {
  suite::test::TempDir dir;
  const std::string best = dir.path + "/best.cpp";
  std::string out;
  const std::string cmd =
      "KFORGE_RUNS=" + dir.path + "/runs " + std::string(KF_BINARY_DIR) +
      "/kforge tune all_reduce --backend host --world 2 --budget 3 --json --out " + best + " 2>" +
      dir.path + "/stderr";
  const int rc = run(cmd, &out);
  std::ifstream err_in(dir.path + "/stderr");
  std::stringstream err;
  err << err_in.rdbuf();
  INFO("stdout:\n" << out << "\nstderr:\n" << err.str());
  REQUIRE(rc == 0);
  nlohmann::json j = nlohmann::json::parse(out);
  CHECK(j["trials"].size() == 3);
  REQUIRE(j["best"].is_object());
  CHECK(j["best"]["status"] == "correct");
  CHECK(j["out"] == best);
  CHECK(j.contains("note"));  // host times are not speeds
  std::ifstream in(best);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("// kforge template all_reduce " +
                        j["best"]["template"].get<std::string>()) == 0);
  CHECK(text.str().find("kf_run") != std::string::npos);
}

TEST_CASE("tune: a problem that does not exist is bad input") {
  suite::test::TempDir dir;
  std::string out;
  const int rc = run("KFORGE_RUNS=" + dir.path + " " + std::string(KF_BINARY_DIR) +
                         "/kforge tune no_such_problem --backend host 2>&1",
                     &out);
  CHECK(rc == 2);
  CHECK(out.find("no_such_problem") != std::string::npos);
}

TEST_CASE("tune: --predict ranks the CUDA templates by the cost model without running any") {
  suite::test::TempDir dir;
  std::string out;
  const int rc =
      run("KFORGE_RUNS=" + dir.path + " " + std::string(KF_BINARY_DIR) +
              "/kforge tune all_reduce --backend cuda --world 8 --predict --json n=16777216",
          &out);
  INFO(out);
  REQUIRE(rc == 0);
  nlohmann::json j = nlohmann::json::parse(out);
  REQUIRE(j["templates"].size() > 1);
  // 64 MiB at world 8: two-shot moves 2(w-1)/w of the bytes one-shot moves (w-1) of.
  CHECK(j["templates"][0]["template"].get<std::string>().rfind("reg/two_shot", 0) == 0);
  for (size_t i = 1; i < j["templates"].size(); ++i)
    CHECK(j["templates"][i - 1]["predicted_ms"].get<double>() <=
          j["templates"][i]["predicted_ms"].get<double>());
  CHECK(j["analysis"].get<std::string>().find("two-shot") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path + "/tune"));  // nothing was evaluated
}
