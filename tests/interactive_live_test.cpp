// tests/interactive_live_test.cpp: the live view of `kforge solve` on a real pseudo
// terminal against the fake LLM server: the reply streamed while the server holds the
// rest of it back (and the clock running meanwhile), the kernel through a pager, agent
// mode's --confirm and the menu key between steps, and a 60-column terminal without
// colour replayed through a terminal model to see what a person is left with.
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
#include "tests/fake_llm/harness.h"
#include "tests/pty.h"
#include "tests/vt_screen.h"

namespace fs = std::filesystem;
using kf_pty::Pty;
using nlohmann::json;

namespace {

// An OpenAI stream: one chunk per text, then the finish with usage, then [DONE].
json sse_stream(const std::vector<std::string>& texts, int out_tokens = 300) {
  json pieces = json::array();
  for (const std::string& t : texts)
    pieces.push_back(
        "data: " + json{{"choices", {{{"index", 0}, {"delta", {{"content", t}}}}}}}.dump() +
        "\n\n");
  pieces.push_back(
      "data: " +
      json{{"choices", {{{"index", 0}, {"delta", json::object()}, {"finish_reason", "stop"}}}},
           {"usage", {{"prompt_tokens", 4000}, {"completion_tokens", out_tokens}}}}
          .dump() +
      "\n\n");
  pieces.push_back("data: [DONE]\n\n");
  return pieces;
}

// The text split in pieces of about n bytes (a stream as a server sends it).
std::vector<std::string> chunks(const std::string& s, size_t n = 64) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size(); i += n) out.push_back(s.substr(i, n));
  return out;
}

std::string bash_reply(const std::string& thought, const std::string& cmd) {
  return thought + "\n\n```bash\n" + cmd + "\n```\n";
}

// A folder of the test's own, emptied first and removed at the end.
struct TestDir {
  std::string path;
  explicit TestDir(const std::string& name)
      : path(fs::temp_directory_path().string() + "/kf_" + name + "_" + std::to_string(getpid())) {
    fs::remove_all(path);
    fs::create_directories(path + "/runs");
  }
  ~TestDir() { fs::remove_all(path); }
};

std::vector<std::string> solve_args(const fake_llm::Server& server,
                                    std::vector<std::string> extra) {
  std::vector<std::string> a = {std::string(KF_BINARY_DIR) + "/kforge",
                                "solve",
                                "all_reduce",
                                "--backend",
                                "host",
                                "--world",
                                "2",
                                "--size",
                                "small",
                                "--no-time",
                                "--model",
                                "openai:test-model",
                                "--base-url",
                                server.url() + "/v1"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// The environment without a PAGER of the caller's (the view's default, less, is tested).
std::vector<std::string> env_for(const std::string& runs, std::vector<std::string> extra = {}) {
  std::vector<std::string> env;
  for (const std::string& kv : kf_pty::child_env(runs))
    if (kv.rfind("PAGER=", 0) != 0 && kv.rfind("LESS=", 0) != 0) env.push_back(kv);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

}  // namespace

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

TEST_CASE("interactive: --confirm runs, rejects and edits agent commands as the person says") {
  const std::string root = KF_SOURCE_ROOT;
  TestDir dir("live_confirm");
  std::string write = "cat > kernel.cpp <<'KFEOF'\n" +
                      kf_pty::read_text(root + "/problems/all_reduce/examples/host.cpp") +
                      "KFEOF\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";
  json script = json::array();
  for (auto& r : {bash_reply("Look first.", "echo approved-$((6*7))"),
                  bash_reply("Clean up.", "echo rejected-$((1+1))"),
                  bash_reply("Print something.", "echo original-$((2+2))"),
                  bash_reply("Write it and submit.", write)})
    script.push_back({{"stream", sse_stream(chunks(r))}});
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);
  Pty term;
  REQUIRE_MESSAGE(term.spawn(solve_args(server, {"--mode", "agent", "--confirm"}),
                             env_for(dir.path + "/runs"), dir.path, &err),
                  err);
  // 1: approved with Enter; its output shows under it.
  bool asked = term.wait_for(cli::kConfirm, 0, 300);
  INFO("terminal:\n" << term.seen);
  REQUIRE(asked);
  CHECK(term.seen.find("$ echo approved-$((6*7))") != std::string::npos);
  term.type("\r");
  REQUIRE(term.wait_for("│ approved-42", 0, 120));
  // 2: rejected, with a reason. (The next question may have come in with the output: look
  // for it just past the output, not past all that was read.)
  size_t at = term.after("│ approved-42", 0);
  REQUIRE(term.wait_for(cli::kConfirm, at, 120));
  term.type("n\r");
  REQUIRE(term.wait_for("why", at, 60));
  term.type("not that one\r");
  REQUIRE(term.wait_for("rejected; the model is told: not that one", at, 60));
  // 3: edited.
  at = term.after("rejected; the model is told: not that one", at);
  REQUIRE(term.wait_for(cli::kConfirm, at, 120));
  term.type("e\r");
  REQUIRE(term.wait_for("command (Enter keeps it)>", at, 60));
  term.type("echo edited-$((2+3))\r");
  REQUIRE(term.wait_for("│ edited-5", at, 120));
  // 4: the kernel, approved, submitted and correct.
  at = term.after("│ edited-5", at);
  REQUIRE(term.wait_for(cli::kConfirm, at, 120));
  term.type("y\r");
  int code = term.wait_exit(300);
  CHECK(code == 0);
  CHECK(term.seen.find("│ rejected-2") == std::string::npos);  // it never ran
  CHECK(term.seen.find("│ original-4") == std::string::npos);
  CHECK(term.seen.find("Done after 4 turns", at) != std::string::npos);

  auto req = server.requests();
  REQUIRE(req.size() == 4);
  std::string after_reject = kf_pty::last_user_text(req[2]);
  CHECK(after_reject.find("rejected your last command") != std::string::npos);
  CHECK(after_reject.find("not that one") != std::string::npos);
  std::string after_edit = kf_pty::last_user_text(req[3]);
  CHECK(after_edit.find("echo edited-$((2+3))") != std::string::npos);
  CHECK(after_edit.find("edited-5") != std::string::npos);
}

TEST_CASE("interactive: m opens the menu between two agent steps; its hint reaches the prompt") {
  const std::string root = KF_SOURCE_ROOT;
  TestDir dir("live_menukey");
  const std::string release = dir.path + "/release";
  const std::string hint = "read kf/host.h before writing";
  std::string write = "cat > kernel.cpp <<'KFEOF'\n" +
                      kf_pty::read_text(root + "/problems/all_reduce/examples/host.cpp") +
                      "KFEOF\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";
  json script =
      json::array({{{"stream", sse_stream(chunks(bash_reply("Look around.", "echo step-one")))},
                    {"hold_before_piece", 1},
                    {"hold_until_file", release}},
                   {{"stream", sse_stream(chunks(bash_reply("Write and submit.", write)))}}});
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);
  Pty term;
  REQUIRE_MESSAGE(term.spawn(solve_args(server, {"--mode", "agent"}), env_for(dir.path + "/runs"),
                             dir.path, &err),
                  err);
  bool writing = term.wait_for("is writing", 0, 300);
  INFO("terminal:\n" << term.seen);
  REQUIRE(writing);
  size_t at = term.seen.size();
  term.type("m");  // one key, no Enter: read while the model writes
  REQUIRE(term.wait_for("menu after this step", at, 60));
  std::ofstream(release) << "go\n";
  // The command runs first (the step under way ends), then the menu, before turn 2.
  REQUIRE(term.wait_for("paused before turn 2 (you pressed m)", at, 120));
  CHECK(term.seen.find("│ step-one", at) < term.seen.find("paused before turn 2", at));
  REQUIRE(term.wait_for("Enter: go on · h: hint", at, 60));
  term.type("h " + hint + "\r");
  REQUIRE(term.wait_for("hint noted: it goes with the prompt of turn 2", at, 60));
  CHECK(term.wait_exit(300) == 0);
  auto req = server.requests();
  REQUIRE(req.size() == 2);
  CHECK(kf_pty::last_user_text(req[1]).find(hint) != std::string::npos);
  CHECK(kf_pty::last_user_text(req[1]).find("step-one") != std::string::npos);
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

TEST_CASE("interactive: an agent command's output shows while it still runs") {
  const std::string root = KF_SOURCE_ROOT;
  TestDir dir("live_cmdout");
  // The command prints, then waits for a file the test makes in its workspace only once
  // it has seen that line: the line can only have come from the running command.
  std::string wait = "echo live-line-17; while [ ! -e go ]; do sleep 0.05; done; echo after-go";
  std::string write = "cat > kernel.cpp <<'KFEOF'\n" +
                      kf_pty::read_text(root + "/problems/all_reduce/examples/host.cpp") +
                      "KFEOF\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";
  json script = json::array({{{"stream", sse_stream(chunks(bash_reply("Wait.", wait)))}},
                             {{"stream", sse_stream(chunks(bash_reply("Submit.", write)))}}});
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);
  Pty term;
  REQUIRE_MESSAGE(term.spawn(solve_args(server, {"--mode", "agent"}), env_for(dir.path + "/runs"),
                             dir.path, &err),
                  err);
  bool running = term.wait_for("running the command", 0, 300);
  INFO("terminal:\n" << term.seen);
  REQUIRE(running);
  size_t at = term.seen.find("running the command");
  REQUIRE(term.wait_for("live-line-17", at, 120));
  CHECK(term.seen.find("→ exit", at) == std::string::npos);  // still running
  std::string workspace;
  for (auto& e : fs::recursive_directory_iterator(dir.path + "/runs"))
    if (e.is_directory() && e.path().filename() == "agent") workspace = e.path().string();
  REQUIRE(!workspace.empty());
  std::ofstream(workspace + "/go") << "go\n";
  REQUIRE(term.wait_for("│ after-go", at, 120));
  CHECK(term.wait_exit(300) == 0);
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
