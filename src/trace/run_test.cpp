// src/trace/run_test.cpp: a trajectory's replies, candidates and verdicts read back as
// the loop writes them; an older trajectory's verdicts (fewer keys) still read; a
// verdict that does not read is an error naming its event.
#include "trace/run.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / (name + std::to_string(getpid()) + ".jsonl")).string();
}

}  // namespace

TEST_CASE("trajectory reader: what the loop writes reads back as types") {
  std::string path = temp_path("kf-run-");
  sandbox::Verdict v;
  v.status = sandbox::Status::mismatch;
  v.backend = sandbox::Backend::host;
  v.world = 2;
  v.summary = "mismatch: rank 1";
  std::string err;
  {
    trace::Writer w;
    REQUIRE_MESSAGE(w.open_path(path, &err), err);
    w.header({{"problem", "p"}});
    w.event(trace::EventType::reply, {{"turn", 1},
                                      {"text", "T"},
                                      {"thinking", "H"},
                                      {"stop_reason", "end_turn"},
                                      {"usage", {{"input_tokens", 10}, {"output_tokens", 5}}},
                                      {"cost_usd", 0.5},
                                      {"attempts", 2},
                                      {"seconds", 1.5},
                                      {"model", "m"},
                                      {"request_id", "r"}});
    w.event(trace::EventType::candidate,
            {{"turn", 1}, {"file", "f.cpp"}, {"sha256", "abc"}, {"source", "S"}});
    w.event(
        trace::EventType::verdict,
        {{"turn", 1}, {"sha256", "abc"}, {"verdict", sandbox::verdict_json(v)}, {"seconds", 3.0}});
    w.event(trace::EventType::summary, {{"exit_reason", "max_turns"}});
  }
  trace::Run run;
  REQUIRE_MESSAGE(trace::read_run(path, &run, &err), err);
  CHECK(run.raw.complete);
  REQUIRE(run.replies.size() == 1);
  const trace::ReplyEvent& r = run.replies[0];
  CHECK(r.turn == 1);
  CHECK(r.text == "T");
  CHECK(r.thinking == "H");
  CHECK(r.stop_reason == "end_turn");
  CHECK(r.usage_reported);
  CHECK(r.input_tokens == 10);
  CHECK(r.output_tokens == 5);
  CHECK(r.cost_usd == 0.5);
  CHECK(r.attempts == 2);
  CHECK(r.model == "m");
  REQUIRE(run.candidates.size() == 1);
  CHECK(run.candidates[0].file == "f.cpp");
  CHECK(run.candidates[0].sha256 == "abc");
  CHECK(run.candidates[0].source == "S");
  REQUIRE(run.verdicts.size() == 1);
  CHECK(run.verdicts[0].turn == 1);
  CHECK(run.verdicts[0].seconds == 3.0);
  CHECK(sandbox::verdict_json(run.verdicts[0].verdict) == sandbox::verdict_json(v));
  fs::remove(path);
}

TEST_CASE("trajectory reader: old keys read; an unknown status names its event") {
  std::string path = temp_path("kf-run-old-");
  std::ofstream(path)
      << json{{"type", "header"}, {"format", trace::kFormat}, {"problem", "p"}}.dump() << "\n"
      << json{{"type", "reply"}, {"turn", 1}, {"text", "T"}}.dump() << "\n"
      << json{{"type", "verdict"},
              {"turn", 1},
              {"verdict", {{"status", "correct"}, {"summary", "correct"}}}}
             .dump()
      << "\n";
  trace::Run run;
  std::string err;
  REQUIRE_MESSAGE(trace::read_run(path, &run, &err), err);
  REQUIRE(run.verdicts.size() == 1);
  CHECK(run.verdicts[0].verdict.status == sandbox::Status::correct);
  CHECK_FALSE(run.replies[0].usage_reported);
  CHECK(run.replies[0].stop_reason == "stop");

  std::ofstream(path, std::ios::app)
      << json{{"type", "verdict"}, {"turn", 2}, {"verdict", {{"status", "great"}}}}.dump() << "\n";
  CHECK_FALSE(trace::read_run(path, &run, &err));
  CHECK(err.find("turn 2") != std::string::npos);
  CHECK(err.find("\"great\"") != std::string::npos);
  fs::remove(path);
}
