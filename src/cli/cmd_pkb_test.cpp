// src/cli/cmd_pkb_test.cpp: `kforge problems --suite pkb:PATH` and `kforge eval --suite
// pkb:PATH PROBLEM SOLUTION.py`, the real binary against a PKB-shaped checkout the test
// writes and a stand-in python.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>

#include "kf_build_paths.h"
#include "pkb/test_util.h"
#include "sandbox/process.h"
#include "tests/kforge_run.h"

namespace {

sandbox::ProcessResult kforge(const std::vector<std::string>& args, const std::string& runs) {
  sandbox::ProcessSpec s;
  s.argv = {std::string(KF_BINARY_DIR) + "/kforge"};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.env = {sandbox::env_entry("PATH"), "KFORGE_RUNS=" + runs, "KFORGE_CACHE=" + runs + "/cache",
           "HOME=" + runs};
  s.limit_s = 120;
  sandbox::ProcessResult r;
  std::string err;
  REQUIRE_MESSAGE(sandbox::run_process(s, &r, &err), err);
  return r;
}

}  // namespace

TEST_CASE("pkb cli: problems --suite pkb:PATH lists the checkout's problems") {
  pkb::test::FakeCheckout f;
  auto r = kforge({"problems", "--suite", "pkb:" + f.root}, f.root);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("16     16_op16") != std::string::npos);
  CHECK(r.output.find("87 problems in " + f.root) != std::string::npos);
  auto bad = kforge({"problems", "--suite", "pkb:" + f.root + "/reference"}, f.root);
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("run_local.py") != std::string::npos);
}

TEST_CASE("pkb cli: eval --suite pkb:PATH runs the job and prints the verdict") {
  pkb::test::FakeCheckout f;
  f.write("solution.py", "def solution(x):\n    return x\n");
  f.write(
      "python",
      "#!/bin/sh\nout=''\nwhile [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=\"$2\"; shift; done\n"
      "echo '{\"rank\":0,\"status\":\"mismatch\",\"tensor\":\"output_0\",\"trial\":0,"
      "\"message\":\"output_0: shape (2,), want (3,)\"}' > $out/rank0.json\nexit 1\n");
  chmod((f.root + "/python").c_str(), 0755);
  auto r = kforge({"eval", "--suite", "pkb:" + f.root, "--world", "1", "--python",
                   f.root + "/python", "3", f.root + "/solution.py"},
                  f.root + "/runs");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("mismatch") != std::string::npos);
  CHECK(r.output.find("output_0") != std::string::npos);
  auto none = kforge({"eval", "--suite", "pkb:" + f.root, "99", f.root + "/solution.py"}, f.root);
  CHECK(none.exit_code == 2);
  CHECK(none.output.find("'99'") != std::string::npos);
  // An option of kforge's own problems is named, not silently dropped.
  for (std::vector<std::string> opt :
       {std::vector<std::string>{"--seed", "7"}, {"--no-race-pass"}, {"--timing", "batched"}}) {
    std::vector<std::string> args = {"eval",
                                     "--suite",
                                     "pkb:" + f.root,
                                     "--python",
                                     f.root + "/python",
                                     "3",
                                     f.root + "/solution.py"};
    args.insert(args.end(), opt.begin(), opt.end());
    auto native = kforge(args, f.root + "/runs");
    CHECK(native.exit_code == 2);
    CHECK_MESSAGE(native.output.find(opt[0] + ": it applies to kforge's own problems only") !=
                      std::string::npos,
                  native.output);
  }
}

TEST_CASE(
    "pkb cli: --timed-check and --warmup-s reach the driver; kforge's own problems refuse them") {
  pkb::test::FakeCheckout f;
  f.write("solution.py", "def solution(x):\n    return x\n");
  // The stand-in prints its arguments (the verdict's log shows them) and reports a crash.
  f.write("python",
          "#!/bin/sh\necho \"driver args: $@.\"\nout=''\nwhile [ $# -gt 0 ]; do [ \"$1\" = "
          "--out ] && out=\"$2\"; shift; done\necho '{\"rank\":0,\"status\":\"crash\"}' > "
          "$out/rank0.json\nexit 1\n");
  chmod((f.root + "/python").c_str(), 0755);
  std::vector<std::string> eval = {"eval",
                                   "--suite",
                                   "pkb:" + f.root,
                                   "--world",
                                   "1",
                                   "--python",
                                   f.root + "/python",
                                   "3",
                                   f.root + "/solution.py"};
  auto r = kforge(eval, f.root + "/runs");
  CHECK_MESSAGE(r.output.find("--timed-check clones ") != std::string::npos, r.output);  // default
  CHECK_MESSAGE(r.output.find("--warmup-s 10 ") != std::string::npos, r.output);
  eval.insert(eval.begin() + 1, {"--timed-check", "last", "--warmup-s", "0"});
  r = kforge(eval, f.root + "/runs");
  CHECK_MESSAGE(r.output.find("--timed-check last ") != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find("--warmup-s 0 ") != std::string::npos, r.output);
  kforge_run::Run native =
      kforge_run::kforge("eval all_reduce --backend host --timed-check clones");
  CHECK(native.code == 2);
  CHECK(native.out.find("--timed-check clones") != std::string::npos);
  CHECK(native.out.find("drop it") != std::string::npos);
  CHECK(kforge_run::kforge("eval all_reduce --timed-check first").code == 2);
  kforge_run::Run warm = kforge_run::kforge("eval all_reduce --backend host --warmup-s 3");
  CHECK(warm.code == 2);
  CHECK(warm.out.find("--warmup-s 3: it limits") != std::string::npos);
  kforge_run::Run job = kforge_run::kforge("eval all_reduce --backend host --job-limit 60");
  CHECK(job.code == 2);
  CHECK(job.out.find("--job-limit 60: it limits a ParallelKernelBench problem's job") !=
        std::string::npos);
  CHECK(job.out.find("use --call-limit") != std::string::npos);
}

TEST_CASE("pkb cli: tune refuses --suite, saying which commands take it; sweep wants a model") {
  kforge_run::Run r = kforge_run::kforge("tune all_reduce --backend host --suite pkb:/nonexistent");
  CHECK(r.code == 2);
  CHECK(r.out.find("--suite pkb:/nonexistent") != std::string::npos);
  CHECK(r.out.find("problems, eval, solve or sweep") != std::string::npos);
  pkb::test::FakeCheckout f;
  r = kforge_run::kforge("sweep 1-3 --suite pkb:" + f.root);
  CHECK(r.code == 2);
  CHECK(r.out.find("give the models to sweep with --model") != std::string::npos);
  r = kforge_run::kforge("sweep 1-3,99 --suite pkb:" + f.root + " --model openai:x");
  CHECK(r.code == 2);
  CHECK(r.out.find("99") != std::string::npos);
}
