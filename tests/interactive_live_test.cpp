// tests/interactive_live_test.cpp: the live view of `kforge solve` on a real pseudo
// terminal against the fake LLM server, between turns: the reply streamed while the server
// holds the rest of it back (and the clock running meanwhile), the kernel through a pager,
// a 60-column terminal without colour replayed through a terminal model to see what a
// person is left with, and the menu's diffs and going back to an earlier turn. (Agent
// mode's live view is interactive_agent_live_test.cpp.)
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli/live.h"
#include "kf_build_paths.h"
#include "tests/live_solve.h"
#include "tests/pty.h"
#include "tests/vt_screen.h"

namespace fs = std::filesystem;
using kf_live::chunks;
using kf_live::env_for;
using kf_live::solve_args;
using kf_live::sse_stream;
using kf_live::TestDir;
using kf_pty::Pty;
using nlohmann::json;

TEST_CASE("interactive: the reply streams while the server stalls, the clock runs; s pages") {
  const std::string root = KF_SOURCE_ROOT;
  TestDir dir("live_stream");
  const std::string release = dir.path + "/release";
  std::vector<std::string> texts = {"Thinking: STREAMED-BEFORE-THE-END, the rest comes later.\n"};
  for (auto& c : chunks("```cpp\n" +
                        kf_pty::read_text(root + "/tests/kernels/host/wrong_rank.cpp") + "```\n"))
    texts.push_back(c);
  json script = json::array(
      {{{"stream", sse_stream(texts)}, {"hold_before_piece", 1}, {"hold_until_file", release}}});
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);
  Pty term;
  REQUIRE_MESSAGE(term.spawn(solve_args(server, {"--max-turns", "1"}), env_for(dir.path + "/runs"),
                             dir.path, &err, 24, 160),
                  err);
  // The first piece is on screen while the server still holds the rest back: streamed,
  // not printed at the end.
  bool streamed = term.wait_for("STREAMED-BEFORE-THE-END", 0, 300);
  INFO("terminal:\n" << term.seen);
  REQUIRE(streamed);
  size_t at = term.seen.find("STREAMED-BEFORE-THE-END");
  CHECK_FALSE(fs::exists(release));
  // The clock and the spinner run on while nothing arrives, and the status says so.
  REQUIRE(term.wait_for("(silent 3s) · turn 1 ·", at, 120));
  CHECK(term.seen.find("is writing", at) != std::string::npos);
  std::set<std::string> clock;  // the step's seconds, as drawn while nothing arrived
  std::string after = term.seen.substr(at);
  std::regex tick(" ([0-9]+s)(?: \\(silent [0-9]+s\\))? · turn 1 ·");
  for (auto it = std::sregex_iterator(after.begin(), after.end(), tick);
       it != std::sregex_iterator(); ++it)
    clock.insert((*it)[1]);
  CHECK(clock.size() >= 2);
  std::set<std::string> frames;
  for (const char* f : {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"})
    if (term.seen.find(f, at) != std::string::npos) frames.insert(f);
  CHECK(frames.size() >= 2);
  std::ofstream(release) << "go\n";

  REQUIRE(term.wait_for(cli::kMenu, at, 300));
  size_t menu = term.seen.rfind(cli::kMenu) + 1;
  CHECK(term.seen.find("replied (300 tokens", at) != std::string::npos);
  CHECK(term.seen.find("more lines of cpp", at) != std::string::npos);  // collapsed
  // 42 lines on 24 rows: the kernel goes through less, in colour; q there, then q quits.
  term.type("s\r");
  REQUIRE(term.wait_for("   20:", menu, 60));
  CHECK(term.seen.find("\033[", menu) != std::string::npos);
  size_t paged = term.seen.size();
  term.type("q");
  REQUIRE(term.wait_for(cli::kMenu, paged, 60));
  term.type("q\r");
  CHECK(term.wait_exit(60) == 1);
  CHECK(server.requests().size() == 1);
}

TEST_CASE("interactive: 60 columns, NO_COLOR: no escape colours, no stale fragment, no cut") {
  const std::string root = KF_SOURCE_ROOT;
  TestDir dir("live_narrow");
  json script = json::array();
  for (const char* k :
       {"/tests/kernels/host/wrong_rank.cpp", "/problems/all_reduce/examples/host.cpp"})
    script.push_back({{"stream", sse_stream(chunks("A kernel of mine, with a long line of prose "
                                                   "that is wider than sixty columns for sure.\n"
                                                   "```cpp\n" +
                                                   kf_pty::read_text(root + k) + "```\n"))},
                      {"delay_ms_between", 30}});
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);
  Pty term;
  REQUIRE_MESSAGE(term.spawn(solve_args(server, {}), env_for(dir.path + "/runs", {"NO_COLOR=1"}),
                             dir.path, &err, 30, 60),
                  err);
  bool menu = term.wait_for(cli::kMenu, 0, 300);
  INFO("terminal:\n" << term.seen);
  REQUIRE(menu);
  term.type("\r");
  CHECK(term.wait_exit(300) == 0);

  CHECK_FALSE(std::regex_search(term.seen, std::regex("\033\\[[0-9;]*m")));  // no colour at all
  kf_pty::VtScreen screen(60);
  screen.feed(term.seen);
  // The header's run folder, longer than the line, wraps after a '/' under its column:
  // the two columns stay two columns.
  const std::vector<std::string> shown = screen.lines();
  size_t run_row = 0;
  while (run_row < shown.size() && shown[run_row].rfind("run      /", 0) != 0) ++run_row;
  REQUIRE(run_row + 1 < shown.size());
  size_t next_row = run_row + 1;
  for (; next_row < shown.size() && shown[next_row].rfind("keys", 0) != 0; ++next_row) {
    CAPTURE(shown[next_row]);
    CHECK(shown[next_row].rfind("         ", 0) == 0);
  }
  CHECK(next_row > run_row + 1);
  std::string all;
  for (const std::string& l : screen.lines()) {
    CAPTURE(l);
    // What the status line and the streamed preview drew was erased whole each time.
    CHECK(l.find("is writing") == std::string::npos);
    CHECK(l.find("waiting on") == std::string::npos);
    CHECK(l.find("m: menu") == std::string::npos);
    CHECK(l.find("  │ ") != 0);
    all += l + " ";
  }
  // The mismatch's whole reason is on screen, wrapped rather than cut.
  std::string traj;
  for (auto& e : fs::recursive_directory_iterator(dir.path + "/runs"))
    if (e.path().extension() == ".jsonl" && e.path().string().find("/evals/") == std::string::npos)
      traj = e.path();
  REQUIRE_FALSE(traj.empty());
  std::string reason;
  std::ifstream in(traj);
  for (std::string l; std::getline(in, l);) {
    auto j = json::parse(l, nullptr, false);
    if (!j.is_discarded() && j.value("type", "") == "verdict" &&
        j["verdict"]["status"] == "mismatch")
      reason = j["verdict"]["summary"].get<std::string>();
  }
  REQUIRE(reason.size() > 60);
  auto squash = [](std::string s) {
    std::string out;
    for (char c : s)
      if (c != ' ') out += c;
    return out;
  };
  CHECK(squash(all).find(squash(reason)) != std::string::npos);
  CHECK(all.find("Done after 2 turns") != std::string::npos);
}

TEST_CASE("interactive: d and b diff at the menu; g 1 goes back to turn 1's kernel as the base") {
  const std::string root = KF_SOURCE_ROOT;
  TestDir dir("live_rewind");
  const std::string wrong = kf_pty::fenced(root + "/tests/kernels/host/wrong_rank.cpp");
  const std::string broken =
      "```cpp\n#include <kf/host.h>\nextern \"C\" int kf_run(kf::Comm&, kf::Tensors&) { return "
      "nope; }\n```\n";
  json script = json::array();
  for (const std::string& text :
       {wrong, broken, kf_pty::fenced(root + "/problems/all_reduce/examples/host.cpp")})
    script.push_back({{"stream", sse_stream(chunks(text))}});
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);
  Pty term;
  REQUIRE_MESSAGE(
      term.spawn(solve_args(server, {}), env_for(dir.path + "/runs", {"NO_COLOR=1", "PAGER=cat"}),
                 dir.path, &err),
      err);
  // The menu's third line, waited for: its lines may arrive in separate reads.
  bool menu = term.wait_for(cli::kMenu3, 0, 300);
  INFO("terminal:\n" << term.seen);
  REQUIRE(menu);
  size_t at = term.seen.size();
  term.type("\r");  // turn 2: the kernel that does not compile
  REQUIRE(term.wait_for(cli::kMenu, at, 300));
  at = term.seen.size();
  term.type("d\r");
  // The diff's last line, waited for: the 40 removed lines before it arrive in pieces.
  REQUIRE(
      term.wait_for("+extern \"C\" int kf_run(kf::Comm&, kf::Tensors&) { return nope; }", at, 60));
  CHECK(term.seen.find("--- previous", at) != std::string::npos);
  CHECK(term.seen.find("+++ current", at) != std::string::npos);
  at = term.seen.size();
  term.type("b\r");  // nothing was correct yet
  REQUIRE(term.wait_for("(no correct kernel yet to compare with)", at, 60));
  at = term.seen.size();
  term.type("g 1\r");
  REQUIRE(term.wait_for("goes on from turn 1's kernel", at, 60));
  CHECK(term.wait_exit(300) == 0);
  // Turn 3's prompt: the task, turn 1's kernel and its feedback; turn 2 is gone from it.
  auto req = server.requests();
  REQUIRE(req.size() == 3);
  const json& msgs = req[2]["body"]["messages"];
  REQUIRE(msgs.size() == 4);
  CHECK(kf_pty::message_text(msgs[2]) == wrong);
  CHECK(kf_pty::last_user_text(req[2]).find("Turn 1: your kernel ran but its outputs are wrong") !=
        std::string::npos);
  CHECK(kf_pty::last_user_text(req[2]).find("nope") == std::string::npos);
}
