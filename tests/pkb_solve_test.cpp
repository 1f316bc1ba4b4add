// tests/pkb_solve_test.cpp: `kforge solve --suite pkb:PATH PROBLEM`, the real kforge binary
// against the loopback LLM server, a PKB-shaped checkout the test writes and a stand-in
// torchrun that judges the candidate file it is given (no torch here): a module that says
// PATCH is rejected for replacing torch.allclose, one that says WRONG gets a mismatch, any
// other a correct verdict at twice the reference's speed.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include "pkb/test_util.h"
#include "tests/has.h"
#include "tests/solve_harness.h"
#include "tests/sweep_script.h"

using namespace solve_test;

namespace {

const char* kStandInPython =
    "#!/bin/sh\nout=''; sol=''\nwhile [ $# -gt 0 ]; do case \"$1\" in\n"
    "  --out) out=\"$2\"; shift;;\n  --solution) sol=\"$2\"; shift;;\nesac; shift; done\n"
    "if grep -q PATCH \"$sol\"; then\n"
    "  echo '{\"rank\":0,\"status\":\"rejected\",\"changed\":[\"torch.allclose\"]}' "
    "> $out/rank0.json\n"
    "elif grep -q WRONG \"$sol\"; then\n"
    "  echo '{\"rank\":0,\"status\":\"mismatch\",\"tensor\":\"output\",\"trial\":0,\"bad\":7,"
    "\"total\":1024,\"max_abs\":2.5,\"message\":\"output: 7 of 1024 elements differ\"}' "
    "> $out/rank0.json\n"
    "else\n"
    "  echo '{\"rank\":0,\"status\":\"correct\",\"trials\":[{\"trial\":0,\"ref_ms\":2.0,"
    "\"cand_ms\":1.0}]}' > $out/rank0.json\nfi\n";

std::string module(const std::string& body) {
  return "Here is my solution.\n\n```python\nimport torch\nimport torch.distributed as dist\n\n"
         "def solution(tensor, scale_3=1.0):\n" +
         body + "```\n";
}

struct PkbSolve {
  Harness h;
  pkb::test::FakeCheckout f;
  PkbSolve() {
    f.write("python", kStandInPython);
    chmod((f.root + "/python").c_str(), 0755);
  }
  // `kforge solve --suite pkb:ROOT 3` against a server playing script; extra flags last.
  Result solve(const json& script, const std::vector<std::string>& extra = {}) {
    fake_llm::Server server;
    std::string err;
    REQUIRE_MESSAGE(server.start(script, &err), err);
    Result res;
    res.out_dir = h.next_out_dir();
    std::vector<std::string> args = {
        "solve",     "--suite",  "pkb:" + f.root,     "3",          "--world",
        "1",         "--python", f.root + "/python",  "--headless", "--out",
        res.out_dir, "--model",  "openai:test-model", "--base-url", server.url() + "/v1"};
    args.insert(args.end(), extra.begin(), extra.end());
    res.code = h.kforge(args, &res.output);
    h.collect(server, &res);
    return res;
  }
  // `kforge sweep 2-3 --suite pkb:ROOT`, two samples each, one turn, into out.
  int sweep(const fake_llm::Server& server, const std::string& out, std::string* text) {
    return h.kforge({"sweep",       "2-3",
                     "--suite",     "pkb:" + f.root,
                     "--world",     "1",
                     "--python",    f.root + "/python",
                     "--samples",   "2",
                     "--jobs",      "1",
                     "--model",     "openai:test-model",
                     "--base-url",  server.url() + "/v1",
                     "--max-turns", "1",
                     "--out",       out},
                    text, 600);
  }
};

}  // namespace

TEST_CASE("pkb solve: a wrong module, its mismatch fed back, then a right one meets the target") {
  PkbSolve s;
  Result r = s.solve(json::array({openai_ok(module("    return tensor * 0  # WRONG\n")),
                                  openai_ok(module("    out = tensor.clone()\n    "
                                                   "dist.all_reduce(out)\n    return out\n"))}),
                     {"--target", "1.5"});
  INFO(r.output);
  CHECK(r.code == 0);
  REQUIRE(r.result.is_object());
  CHECK(r.result["exit_reason"] == "target");
  CHECK(verdict_statuses(r.run) == std::vector<std::string>{"mismatch", "correct"});
  CHECK(r.traj.header["problem"] == "pkb-3_op3");
  CHECK(r.traj.header["config"]["suite"] == "pkb:" + s.f.root);
  // The first request: PKB's system prompt and the problem's task, with its reference.
  REQUIRE(r.requests.size() == 2);
  auto& msgs = r.requests[0]["body"]["messages"];
  CHECK(has(msgs[0]["content"], "ParallelKernelBench"));
  CHECK(has(msgs[1]["content"], "# ParallelKernelBench problem 3 (3_op3)"));
  CHECK(has(msgs[1]["content"], "def solution(tensor: torch.Tensor, scale_3: float = 1.0)"));
  CHECK(has(msgs[1]["content"], "## CUDA"));       // kforge's primitives' notes
  CHECK_FALSE(has(msgs[0]["content"], "kf_run"));  // not the native ABI
  // The second: the mismatch, in PKB's words, naming the rank and the output.
  std::string feedback = last_message(r.requests, 1);
  CHECK(has(feedback, "Turn 1: your solution ran but its outputs differ from the reference's"));
  CHECK(has(feedback, "rank 0, tensor output, 7 of 1024 elements wrong"));
  // The candidates are .py files, the best one kept as best.py with a speedup of 2.
  CHECK(read_file(r.out_dir + "/best.py").find("dist.all_reduce(out)") != std::string::npos);
  json v = json::parse(read_file(r.out_dir + "/verdict.json"));
  CHECK(v["status"] == "correct");
  CHECK(v["speedup"].get<double>() == doctest::Approx(2.0));
  CHECK(v["problem"] == "pkb:3_op3");
}

TEST_CASE("pkb solve: a module that replaced what the check calls is told so, by name") {
  PkbSolve s;
  Result r = s.solve(json::array({openai_ok(module("    return tensor  # PATCH\n")),
                                  openai_ok(module("    return tensor\n"))}));
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(verdict_statuses(r.run) == std::vector<std::string>{"rejected", "correct"});
  std::string feedback = last_message(r.requests, 1);
  CHECK(has(feedback, "Turn 1: your solution was rejected before it was checked"));
  CHECK(has(feedback, "changes torch.allclose"));
  CHECK(has(feedback, "must not replace or wrap functions of torch"));
}

TEST_CASE("pkb solve: a reply with no python module is a format error that says the format") {
  PkbSolve s;
  Result r = s.solve(json::array({openai_ok("```cuda\n__global__ void k() {}\n```\n"),
                                  openai_ok(module("    return tensor\n"))}));
  INFO(r.output);
  CHECK(r.code == 0);
  std::string msg = last_message(r.requests, 1);
  CHECK(has(msg, "No code block in your reply is tagged python"));
  CHECK(has(msg, "def solution("));
}

TEST_CASE("pkb solve: what it refuses, saying what to do instead") {
  PkbSolve s;
  std::string out;
  std::string suite = "pkb:" + s.f.root;
  CHECK(s.h.kforge({"solve", "--suite", suite, "3", "--headless", "--model", "builtin"}, &out) ==
        2);
  CHECK(has(out, "give a model for a PKB problem"));
  CHECK(s.h.kforge({"solve", "--suite", suite, "3", "--mode", "agent", "--headless"}, &out) == 2);
  CHECK(has(out, "direct mode only"));
  CHECK(s.h.kforge({"solve", "--suite", suite, "3", "--profile", "auto", "--headless"}, &out) == 2);
  CHECK(has(out, "a PKB solution (a Python module) is not profiled"));
  CHECK(s.h.kforge({"solve", "--suite", suite, "999", "--headless"}, &out) == 2);
  CHECK(has(out, "'999'"));
  CHECK(s.h.kforge({"solve", "--suite", suite, "--headless"}, &out) == 2);
  CHECK(has(out, "give one PKB problem"));
}

TEST_CASE("pkb sweep: two problems x 2 samples through solve --suite, with pass@k and speed") {
  PkbSolve s;
  // Problem 2: both samples right; problem 3: sample 0 wrong, sample 1 right.
  json script = json::array();
  for (auto [problem, seed, right] : std::vector<std::tuple<int, int, bool>>{
           {2, 0, true}, {2, 1, true}, {3, 0, false}, {3, 1, true}}) {
    json step =
        openai_ok(module(right ? "    return tensor\n" : "    return 0 * tensor  # WRONG\n"));
    step["when"] = {"ParallelKernelBench problem " + std::to_string(problem) + " (",
                    "\"seed\":" + std::to_string(seed)};
    script.push_back(step);
  }
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);
  std::string out = s.h.dir() + "/sweep", text;
  int code = s.sweep(server, out, &text);
  INFO(text);
  REQUIRE(code == 0);
  json st = sweep_script::status(s.h, out);
  CHECK(st["done"] == 4);
  CHECK(sweep_script::at_k(sweep_script::row(st, "2_op2"), 1) == doctest::Approx(1.0));
  CHECK(sweep_script::at_k(sweep_script::row(st, "3_op3"), 1) == doctest::Approx(0.5));
  json all = sweep_script::row(st, "all");
  CHECK(all["correct"] == 3);
  CHECK(all["speed_measured"] == true);  // timed beside the reference on the same GPU
  CHECK(all["geomean_speedup"].get<double>() == doctest::Approx(2.0));
  // The samples' evals ran on the sweep's own server, each in a folder of its pool's
  // (cli/pkb_serve.h), not in the samples' own processes.
  int served = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(out + "/evals/pkb"))
    served += e.path().filename() == "rank0.json";
  CHECK(served == 4);
}

TEST_CASE("pkb solve: a setup that cannot run the job ends it with exit 2; a sweep stops at once") {
  PkbSolve s;
  s.f.write("python",
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=\"$2\"; shift; done\n"
            "echo '{\"rank\":0,\"status\":\"environment\",\"python\":\"/venv/bin/python3\","
            "\"message\":\"import torch: ModuleNotFoundError: No module named torch\"}' | "
            "tee $out/rank0.json > $out/probe.json\n");
  Result r = s.solve(json::array({openai_ok(module("    return tensor\n"))}));
  INFO(r.output);
  CHECK(r.code == 2);
  REQUIRE(r.result.is_object());
  CHECK(r.result["error"] == "bad_input");
  CHECK(has(r.result["message"], "cannot run a PKB job: import torch: ModuleNotFoundError"));
  CHECK(has(r.result["message"], "--python or KF_PYTHON"));
  CHECK(verdict_statuses(r.run).empty());  // no candidate's verdict
  CHECK(r.traj.of_type(trace::EventType::setup_error).size() == 1);
  REQUIRE(r.traj.summary());
  CHECK((*r.traj.summary())["exit_reason"] == "setup_error");
  std::string shown;
  CHECK(s.h.kforge({"show", r.trajectory_path}, &shown) == 0);
  CHECK(has(shown, "setup error: this setup cannot run a PKB job: import torch"));
  // A sweep: every sample would fail alike, so the first one's error ends it.
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(json::array({openai_ok(module("    return tensor\n")),
                                            openai_ok(module("    return tensor\n"))}),
                               &err),
                  err);
  std::string text;
  int code = s.sweep(server, s.h.dir() + "/sweep", &text);
  INFO(text);
  CHECK(code == 2);
  CHECK(has(text, "No module named torch"));
  CHECK(server.requests().size() == 1);
}

TEST_CASE("pkb sweep: a problem whose reference fails here is not runnable; the sweep goes on") {
  PkbSolve s;
  // Problem 2's reference runs out of memory making its inputs, with or without a solution;
  // problem 3 runs as in the other tests.
  s.f.write("python",
            "#!/bin/sh\nout=''; ref=''\nwhile [ $# -gt 0 ]; do case \"$1\" in\n"
            "  --out) out=\"$2\"; shift;;\n  --reference) ref=\"$2\"; shift;;\n"
            "esac; shift; done\n"
            "case \"$ref\" in */2_op2.py)\n"
            "  printf '%s' '{\"rank\":0,\"status\":\"reference\",\"phase\":\"check trial 0\","
            "\"side\":\"inputs\",\"message\":\"in check trial 0: Traceback\\ntorch."
            "OutOfMemoryError: CUDA out of memory\\n\"}' > $out/rank0.json; exit 1;;\nesac\n"
            "echo '{\"rank\":0,\"status\":\"correct\",\"trials\":[{\"trial\":0,\"ref_ms\":2.0,"
            "\"cand_ms\":1.0}]}' > $out/rank0.json\n");
  auto start = [](fake_llm::Server* server, int replies) {
    json script = json::array();
    for (int i = 0; i < replies; ++i) script.push_back(openai_ok(module("    return tensor\n")));
    std::string err;
    REQUIRE_MESSAGE(server->start(script, &err), err);
  };
  fake_llm::Server server;
  start(&server, 3);
  std::string out = s.h.dir() + "/sweep", text;
  int code = s.sweep(server, out, &text);
  INFO(text);
  CHECK(code == 0);
  // One model call learnt that problem 2 cannot run here; its second sample made none.
  REQUIRE(server.requests().size() == 3);
  std::string first = server.requests()[0]["body"].dump();
  CHECK(has(first, "ParallelKernelBench problem 2 ("));
  json st = sweep_script::status(s.h, out);
  CHECK(st["done"] == 2);
  CHECK(st["failed"] == 0);
  CHECK(st["not_runnable"] == 2);
  CHECK(has(st["not_runnable_problems"]["2_op2"],
            "PKB's reference fails on this setup at world 1, with no solution loaded (rank 0, "
            "check trial 0 (making the inputs): torch.OutOfMemoryError: CUDA out of memory)"));
  json all = sweep_script::row(st, "all");
  CHECK(all["n"] == 2);  // problem 3's two samples alone: problem 2 is in no metric
  CHECK(all["correct"] == 2);
  for (const json& r : st["rows"]) CHECK(r["scope"] != "2_op2");
  std::string table;
  CHECK(s.h.kforge({"sweep", "status", out}, &table) == 0);
  CHECK(has(table, "2 not runnable on this setup"));
  CHECK(has(table, "not runnable here: 2_op2: PKB's reference fails"));
  // The sample that ran: its solve said so in verdict.json and in its trajectory.
  json v = json::parse(read_file(out + "/samples/2_op2/openai_test-model/0/verdict.json"));
  CHECK(v["solve"]["error"] == "problem_not_runnable");
  CHECK(v["solve"]["exit_code"] == 2);
  // Run again: problem 3 is finished; problem 2 is tried again (the setup may have changed).
  fake_llm::Server again;
  start(&again, 1);
  code = s.sweep(again, out, &text);
  CHECK(code == 0);
  CHECK(again.requests().size() == 1);
}
