// src/agent/resume_test.cpp: the state a resumed run starts from, rebuilt from a
// trajectory as the loop writes it: the conversation after the last prompt (a reply and
// its feedback, a hint, a retry, a rewind), the feedback of a verdict that was never
// logged, the spend of a killed part, and a torn last line cut before appending.
#include "agent/resume.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/template.h"
#include "sandbox/verdict.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A part that ran turn 1 (a mismatch, its feedback) and turn 2's reply, then `tail`.
std::string write_run(const std::string& name,
                      const std::vector<std::pair<std::string, json>>& tail,
                      bool feedback1 = true) {
  std::string path =
      (fs::temp_directory_path() / (name + std::to_string(getpid()) + ".jsonl")).string();
  std::string err;
  trace::Writer w;
  REQUIRE_MESSAGE(w.open_path(path, &err), err);
  w.header({{"problem", "p"}});
  sandbox::Verdict v;
  v.status = sandbox::Status::mismatch;
  v.backend = sandbox::Backend::host;
  v.world = 2;
  v.summary = "mismatch: rank 1";
  w.event(
      trace::EventType::prompt,
      {{"turn", 1},
       {"keep", 0},
       {"new", {{{"role", "system"}, {"content", "S"}}, {{"role", "user"}, {"content", "T"}}}}});
  w.event(trace::EventType::reply, {{"turn", 1},
                                    {"text", "A1"},
                                    {"usage", {{"input_tokens", 10}, {"output_tokens", 5}}},
                                    {"cost_usd", 0.25}});
  w.event(trace::EventType::candidate,
          {{"turn", 1}, {"file", "turn_1.cpp"}, {"sha256", "h1"}, {"source", "K1"}});
  w.event(trace::EventType::verdict,
          {{"turn", 1}, {"sha256", "h1"}, {"verdict", sandbox::verdict_json(v)}});
  if (feedback1) {
    w.event(trace::EventType::feedback, {{"turn", 1}, {"content", "F1"}});
    w.event(trace::EventType::decision, {{"turn", 1}, {"action", "next"}});
    w.event(
        trace::EventType::prompt,
        {{"turn", 2},
         {"keep", 2},
         {"new",
          {{{"role", "assistant"}, {"content", "A1"}}, {{"role", "user"}, {"content", "F1"}}}}});
    w.event(trace::EventType::reply, {{"turn", 2},
                                      {"text", "A2"},
                                      {"usage", {{"input_tokens", 20}, {"output_tokens", 7}}},
                                      {"cost_usd", 0.5}});
  }
  for (auto& [name, fields] : tail) {
    trace::EventType type = trace::EventType::unknown;
    REQUIRE(sandbox::parse_enum(name, &type));
    w.event(type, fields);
  }
  return path;
}

agent::ResumeFrom resumed(const std::string& path) {
  trace::Run run;
  std::string err;
  REQUIRE_MESSAGE(trace::read_run(path, &run, &err), err);
  agent::ResumeFrom r;
  REQUIRE_MESSAGE(agent::resume_from(run, agent::default_prompts_dir(), 1.0, &r, &err), err);
  fs::remove(path);
  return r;
}

std::vector<std::string> contents(const std::vector<llm::Message>& m) {
  std::vector<std::string> out;
  for (auto& x : m) out.push_back(x.content);
  return out;
}

}  // namespace

TEST_CASE("resume: a killed part's conversation, candidates and spend, from its events") {
  agent::ResumeFrom r =
      resumed(write_run("kf-resume-a-", {{"format_error", {{"turn", 2}}},
                                         {"feedback", {{"turn", 2}, {"content", "E2"}}}}));
  CHECK(r.how == "killed");
  CHECK(r.part == 2);
  CHECK(r.spent.turns == 2);
  CHECK(r.spent.candidates == 1);
  CHECK(r.spent.tokens_in == 30);
  CHECK(r.spent.tokens_out == 12);
  CHECK(r.spent.cost_usd == doctest::Approx(0.75));
  CHECK(contents(r.messages) == std::vector<std::string>{"S", "T", "A1", "F1", "A2", "E2"});
  CHECK(contents(r.logged) == std::vector<std::string>{"S", "T", "A1", "F1"});
  CHECK(r.has_last);
  CHECK(r.last_source == "K1");
  CHECK_FALSE(r.has_best);
  CHECK(r.sources.at(1) == "K1");
  CHECK(r.feedback.at(1) == "F1");
}

TEST_CASE(
    "resume: a retry, an interrupt and a rewind take the conversation back; a hint is added") {
  // Turn 2's reply is retried away: the next prompt is turn 2's again.
  agent::ResumeFrom retry =
      resumed(write_run("kf-resume-b-", {{"feedback", {{"turn", 2}, {"content", "F2"}}},
                                         {"decision", {{"turn", 2}, {"action", "retry"}}}}));
  CHECK(contents(retry.messages) == std::vector<std::string>{"S", "T", "A1", "F1"});
  // A Ctrl-C stopped turn 2's eval; the person went on with a hint.
  std::string hint;
  std::string err;
  REQUIRE(agent::render_prompt_file(agent::default_prompts_dir(), "hint.md", {{"hint", "go"}},
                                    &hint, &err));
  agent::ResumeFrom cut = resumed(write_run(
      "kf-resume-c-", {{"interrupted", {{"turn", 2}, {"phase", "eval"}}},
                       {"decision", {{"turn", 2}, {"action", "hint"}, {"after", "interrupted"}}},
                       {"hint", {{"turn", 3}, {"text", "go"}}}}));
  CHECK(contents(cut.messages) == std::vector<std::string>{"S", "T", "A1", "F1" + hint});
  // Back to turn 1's kernel after turn 2's feedback.
  agent::ResumeFrom back = resumed(
      write_run("kf-resume-d-", {{"feedback", {{"turn", 2}, {"content", "F2"}}},
                                 {"rewind", {{"turn", 3}, {"to_turn", 1}, {"done", true}}}}));
  CHECK(contents(back.messages) == std::vector<std::string>{"S", "T", "A1", "F1"});
}

TEST_CASE(
    "resume: a verdict whose feedback was never logged gets it rendered; a part's summary counts") {
  // Killed between turn 1's verdict and its feedback (or an older trajectory).
  agent::ResumeFrom r = resumed(write_run("kf-resume-e-", {}, false));
  REQUIRE(r.messages.size() == 4);
  CHECK(r.messages[2].content == "A1");
  CHECK(r.messages[3].role == "user");
  CHECK(r.messages[3].content.find("Turn 1: your kernel ran but its outputs are wrong") !=
        std::string::npos);
  // An ended part: its summary's totals, and how it ended.
  agent::ResumeFrom done =
      resumed(write_run("kf-resume-f-", {{"feedback", {{"turn", 2}, {"content", "F2"}}},
                                         {"summary",
                                          {{"exit_reason", "max_turns"},
                                           {"turns", 2},
                                           {"candidates", 1},
                                           {"tokens_in", 31},
                                           {"tokens_out", 12},
                                           {"cost_usd", 0.8},
                                           {"seconds", 9.5}}}}));
  CHECK(done.how == "max_turns");
  CHECK(done.spent.tokens_in == 31);
  CHECK(done.spent.cost_usd == doctest::Approx(0.8));
  CHECK(done.spent.seconds == doctest::Approx(9.5));
}

TEST_CASE("resume: a run without a prompt cannot be resumed; rewind_messages finds the feedback") {
  std::string path =
      (fs::temp_directory_path() / ("kf-resume-g-" + std::to_string(getpid()) + ".jsonl")).string();
  std::string err;
  {
    trace::Writer w;
    REQUIRE_MESSAGE(w.open_path(path, &err), err);
    w.header({{"problem", "p"}});
  }
  trace::Run run;
  REQUIRE_MESSAGE(trace::read_run(path, &run, &err), err);
  agent::ResumeFrom r;
  CHECK_FALSE(agent::resume_from(run, agent::default_prompts_dir(), 1.0, &r, &err));
  CHECK(err.find(path + ": no prompt was sent") == 0);
  fs::remove(path);
  std::vector<llm::Message> m = {{"user", "T"},
                                 {"assistant", "A1"},
                                 {"user", "F1 and a hint"},
                                 {"assistant", "A2"},
                                 {"user", "F2"}};
  CHECK(agent::rewind_messages(&m, "F1"));
  CHECK(m.size() == 3);
  CHECK_FALSE(agent::rewind_messages(&m, "F9"));
  CHECK(m.size() == 3);
}

TEST_CASE("trajectory writer: open_append cuts a torn last line and goes on from the time given") {
  std::string path =
      (fs::temp_directory_path() / ("kf-resume-h-" + std::to_string(getpid()) + ".jsonl")).string();
  std::ofstream(path) << "{\"type\":\"header\",\"format\":\"" << trace::kFormat
                      << "\"}\n{\"type\":\"prompt\",\"t\":4.0}\n{\"type\":\"rep";
  std::string err;
  {
    trace::Writer w;
    REQUIRE_MESSAGE(w.open_append(path, 100.0, &err), err);
    w.event(trace::EventType::resumed, {{"part", 2}});
  }
  trace::Trajectory t;
  std::string warn;
  REQUIRE_MESSAGE(trace::read_trajectory(path, &t, &err, &warn), err);
  CHECK(warn.empty());
  REQUIRE(t.events.size() == 2);
  CHECK(t.events[1]["type"] == "resumed");
  CHECK(t.events[1]["t"].get<double>() >= 100.0);
  fs::remove(path);
}
