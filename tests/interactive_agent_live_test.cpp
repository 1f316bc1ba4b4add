// tests/interactive_agent_live_test.cpp: the live view of `kforge solve --mode agent` on a
// real pseudo terminal against the fake LLM server: --confirm's approve, reject and edit
// of each command, the menu key between two steps, and a command's output shown while it
// still runs. (The other live views are interactive_live_test.cpp.)
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/live.h"
#include "kf_build_paths.h"
#include "tests/live_solve.h"
#include "tests/pty.h"

namespace fs = std::filesystem;
using kf_live::bash_reply;
using kf_live::chunks;
using kf_live::env_for;
using kf_live::solve_args;
using kf_live::sse_stream;
using kf_live::TestDir;
using kf_pty::Pty;
using nlohmann::json;

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
