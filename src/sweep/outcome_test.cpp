// src/sweep/outcome_test.cpp: a sample's outcome from its folder: done or failed, the
// first correct kernel's turn, tokens and dollars from a trajectory, no speed on host.
#include "sweep/outcome.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "trace/trace.h"

namespace sweep {

namespace {

using json = nlohmann::json;

struct Folder {
  std::string dir;
  Folder() {
    char t[] = "/tmp/kf-outcome-test-XXXXXX";
    REQUIRE(mkdtemp(t));
    dir = t;
  }
  ~Folder() { std::filesystem::remove_all(dir); }
  // A trajectory of three turns: a compile error, the first correct kernel, a faster one.
  std::string trajectory() {
    std::string p = dir + "/t.jsonl";
    std::ofstream o(p);
    o << json{{"type", "header"}, {"format", trace::kFormat}}.dump() << "\n";
    auto reply = [&](int turn, int in, int out, double usd) {
      o << json{{"type", "reply"},
                {"turn", turn},
                {"usage", {{"input_tokens", in}, {"output_tokens", out}}},
                {"cost_usd", usd}}
               .dump()
        << "\n";
    };
    auto verdict = [&](int turn, const char* status) {
      o << json{{"type", "verdict"}, {"turn", turn}, {"verdict", {{"status", status}}}}.dump()
        << "\n";
    };
    reply(1, 100, 50, 0.01);
    verdict(1, "compile_error");
    reply(2, 300, 60, 0.02);
    verdict(2, "correct");
    reply(3, 500, 70, 0.04);
    verdict(3, "correct");
    o << json{{"type", "summary"}}.dump() << "\n";
    return p;
  }
  void verdict_json(const json& v) { std::ofstream(dir + "/verdict.json") << v.dump(); }
};

}  // namespace

TEST_CASE("sweep outcome: the first correct kernel's turn and the spend up to it") {
  Folder f;
  FirstCorrect fc;
  std::string err;
  REQUIRE(first_correct(f.trajectory(), &fc, &err));
  CHECK(fc.turn == 2);
  CHECK(fc.tokens == 100 + 50 + 300 + 60);
  CHECK(fc.cost_usd == doctest::Approx(0.03));
}

TEST_CASE("sweep outcome: done with its figures; no speed off real GPUs") {
  Folder f;
  std::string traj = f.trajectory();
  json solve = {
      {"turns", 3},       {"best_turn", 3},     {"tokens_in", 900},  {"tokens_out", 180},
      {"cost_usd", 0.07}, {"trajectory", traj}, {"kernel", "k.cpp"}, {"exit_reason", "max_turns"}};
  f.verdict_json({{"status", "correct"},
                  {"backend", "host"},
                  {"emulated", false},
                  {"timed", true},
                  {"speedup", 1.7},
                  {"solve", solve}});
  Record r;
  read_outcome(f.dir, 1, "", &r);
  CHECK(r.state == SampleState::done);
  CHECK(r.correct);
  CHECK(r.speedup == 0);  // the host backend's times are no speed
  CHECK(r.first_correct_turn == 2);
  CHECK(r.tokens_to_correct == 510);
  CHECK(r.tokens == 1080);
  CHECK(r.cost_usd == doctest::Approx(0.07));
  // The same on real GPUs carries its speedup; emulated ranks do not.
  f.verdict_json({{"status", "correct"},
                  {"backend", "cuda"},
                  {"emulated", false},
                  {"timed", true},
                  {"speedup", 1.7},
                  {"solve", solve}});
  read_outcome(f.dir, 0, "", &r);
  CHECK(r.speedup == doctest::Approx(1.7));
  f.verdict_json({{"status", "correct"},
                  {"backend", "cuda"},
                  {"emulated", true},
                  {"timed", true},
                  {"speedup", 1.7},
                  {"solve", solve}});
  read_outcome(f.dir, 0, "", &r);
  CHECK(r.speedup == 0);
}

TEST_CASE("sweep outcome: kforge's or the provider's failure, a signal, no verdict: failed") {
  Folder f;
  Record r;
  read_outcome(f.dir, 3, "kforge solve: boom", &r);
  CHECK(r.state == SampleState::failed);
  CHECK(r.message.find("no verdict.json") != std::string::npos);
  CHECK(r.message.find("boom") != std::string::npos);
  f.verdict_json({{"solve", {{"exit_reason", "llm_error"}, {"message", "http 400"}}}});
  read_outcome(f.dir, 3, "", &r);
  CHECK(r.state == SampleState::failed);
  CHECK(r.message.find("http 400") != std::string::npos);
  // A rate limit: the sweep, which runs samples at once, says to run fewer.
  f.verdict_json({{"solve",
                   {{"exit_reason", "llm_error"},
                    {"message", "rate_limited: rate limited by openai (HTTP 429): wait"}}}});
  read_outcome(f.dir, 3, "", &r);
  CHECK(r.message.find("lower --jobs") != std::string::npos);
  f.verdict_json({{"status", "mismatch"}, {"solve", {{"exit_reason", "interrupted"}}}});
  read_outcome(f.dir, 143, "", &r);
  CHECK(r.state == SampleState::failed);
  CHECK_FALSE(r.correct);
  read_outcome(f.dir, 1, "", &r);
  CHECK(r.state == SampleState::done);
  CHECK(r.status == "mismatch");
}

TEST_CASE("sweep outcome: a problem whose reference fails here is not runnable, not failed") {
  Folder f;
  Record r;
  f.verdict_json({{"solve",
                   {{"exit_reason", "setup_error"},
                    {"error", "problem_not_runnable"},
                    {"message", "49_x: PKB's reference fails on this setup at world 1"},
                    {"cost_usd", 0.01}}}});
  read_outcome(f.dir, 2, "", &r);
  CHECK(r.state == SampleState::not_runnable);
  CHECK(r.status == "not_runnable");
  CHECK_FALSE(r.correct);
  CHECK(r.message == "49_x: PKB's reference fails on this setup at world 1");
  CHECK(r.cost_usd == doctest::Approx(0.01));  // the model call it made still counts
  // The builtin with a problem it has no templates for: listed as well, not failed.
  f.verdict_json({{"solve",
                   {{"error", "builtin_unsupported"},
                    {"message", "problem mine is not supported by the builtin: ..."}}}});
  read_outcome(f.dir, 2, "", &r);
  CHECK(r.state == SampleState::not_runnable);
  CHECK(r.message == "problem mine is not supported by the builtin: ...");
  // Exit 2 for the whole setup (no torch): no outcome; the sweep stops on the exit code.
  f.verdict_json({{"solve", {{"error", "bad_input"}, {"message", "no torch"}}}});
  read_outcome(f.dir, 2, "", &r);
  CHECK(r.state == SampleState::failed);
}

}  // namespace sweep
