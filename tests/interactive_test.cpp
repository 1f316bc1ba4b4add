// tests/interactive_test.cpp: `kforge solve` on a terminal, for real: the kforge binary
// runs on a pseudo terminal (forkpty) against the fake LLM server; the test reads the
// screen, waits for the between-turns menu and types a hint, as a person would.
#include <doctest/doctest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/live.h"
#include "kf_build_paths.h"
#include "sandbox/process.h"
#include "tests/fake_llm/fixtures.h"
#include "tests/fake_llm/harness.h"
#include "tests/live_solve.h"
#include "tests/pty.h"

namespace fs = std::filesystem;

using kf_pty::child_env;
using kf_pty::fenced;
using kf_pty::last_user_text;
using kf_pty::Pty;
using kf_pty::read_text;

namespace {

// The live view's header says what runs where before the first model call.
void check_header(const std::string& seen, const std::string& runs) {
  size_t header = seen.find("kforge solve · all_reduce · 2 ranks · host backend");
  CHECK(header != std::string::npos);
  CHECK(seen.find("model    openai:test-model, direct mode") != std::string::npos);
  CHECK(seen.find("target   a correct kernel") != std::string::npos);
  CHECK(seen.find("budgets  2 turns") != std::string::npos);
  CHECK(seen.find("run      " + runs + "/all_reduce/") != std::string::npos);
  CHECK(header < seen.find("turn 1 · waiting on openai:test-model"));
}

// Answers a menu that comes after `after_menu` (if the loop asks again) with accept,
// until kforge exits; its exit code, or -1.
int accept_until_exit(Pty* term, size_t after_menu) {
  int code = -1;
  for (int round = 0; round < 3 && code < 0; ++round) {
    if (term->wait_for(cli::kMenu, after_menu, 300)) {
      after_menu = term->seen.rfind(cli::kMenu) + 1;
      term->type("a\r");
      continue;
    }
    code = term->wait_exit(60);
  }
  return code;
}

}  // namespace

TEST_CASE("interactive: a hint typed at the menu reaches the next prompt") {
  const std::string root = KF_SOURCE_ROOT;
  const std::string hint = "use the epoch barrier from the example";
  nlohmann::json script = nlohmann::json::array();
  script.push_back(
      {{"body", fake_llm::openai_body(fenced(root + "/tests/kernels/host/wrong_rank.cpp"))}});
  script.push_back(
      {{"body", fake_llm::openai_body(fenced(root + "/problems/all_reduce/examples/host.cpp"))}});
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);

  kf_live::TestDir scratch("interactive");
  const std::string& dir = scratch.path;
  Pty term;
  std::vector<std::string> args = kf_live::solve_args(server, {"--max-turns", "2"});
  REQUIRE_MESSAGE(term.spawn(args, child_env(dir + "/runs"), dir, &err), err);

  // Turn 1: the wrong kernel, its verdict, then the menu.
  bool menu = term.wait_for(cli::kMenu, 0, 300);
  INFO("terminal:\n" << term.seen);
  REQUIRE(menu);
  check_header(term.seen, dir + "/runs");
  CHECK(term.seen.find("turn 1: mismatch") != std::string::npos);
  // `s` shows the kernel with line numbers, in colour, then the menu comes back.
  size_t after_menu = term.seen.rfind(cli::kMenu) + 1;
  term.type("s\r");  // Enter on a terminal sends CR; the tty makes it a newline
  REQUIRE(term.wait_for(cli::kMenu, after_menu, 60));
  size_t shown = term.seen.find("// Fault (problem all_reduce", after_menu);
  CHECK(shown != std::string::npos);
  CHECK(term.seen.find("1:", after_menu) < shown);
  CHECK(term.seen.find("\033[", after_menu) < shown);
  after_menu = term.seen.rfind(cli::kMenu) + 1;
  term.type("h " + hint + "\r");
  // Acknowledged at once, and shown again as the turn it goes with opens.
  CHECK(term.wait_for("hint noted: it goes with the prompt of turn 2", after_menu, 60));
  CHECK(term.wait_for("with your hint: " + hint, after_menu, 300));

  // Turn 2: the correct kernel; kforge must end on its own with success.
  int code = accept_until_exit(&term, after_menu);
  INFO("terminal:\n" << term.seen);
  CHECK(code == 0);
  CHECK(term.seen.find("turn 2") != std::string::npos);
  CHECK(term.seen.find("correct") != std::string::npos);

  auto requests = server.requests();
  REQUIRE(requests.size() >= 2);
  CHECK(last_user_text(requests[0]).find(hint) == std::string::npos);
  CHECK(last_user_text(requests[1]).find(hint) != std::string::npos);

  // A trajectory was written, and it records the hint too.
  std::string trajectory;
  for (auto& e : fs::recursive_directory_iterator(dir + "/runs"))
    if (e.is_regular_file() && e.path().extension() == ".jsonl" &&
        read_text(e.path()).find("test-model") != std::string::npos)
      trajectory = e.path();
  INFO("runs: " << dir + "/runs");
  REQUIRE_FALSE(trajectory.empty());
  CHECK(read_text(trajectory).find(hint) != std::string::npos);
}

namespace {

// The trajectory of the run under runs (the one .jsonl there).
std::string find_trajectory(const std::string& runs) {
  for (auto& e : fs::recursive_directory_iterator(runs))
    if (e.is_regular_file() && e.path().extension() == ".jsonl" &&
        e.path().string().find("/evals/") == std::string::npos)
      return e.path();
  return "";
}

// Lines of a JSONL file whose "type" is type.
std::vector<nlohmann::json> events_of(const std::string& path, const std::string& type) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) {
    auto j = nlohmann::json::parse(l, nullptr, false);
    if (!j.is_discarded() && j.value("type", "") == type) out.push_back(j);
  }
  return out;
}

// Live processes (other than this one and `except`) whose command line, cwd or
// environment names dir.
bool anything_left_in(const std::string& dir, int except = 0) {
  for (auto& e : fs::directory_iterator("/proc")) {
    int pid = atoi(e.path().filename().c_str());
    if (pid <= 0 || pid == getpid() || pid == except || !sandbox::process_alive(pid)) continue;
    std::error_code ec;
    std::string cwd = fs::read_symlink(e.path() / "cwd", ec).string();
    if (sandbox::read_proc_file(e.path() / "cmdline").find(dir) != std::string::npos ||
        cwd.find(dir) != std::string::npos ||
        sandbox::read_proc_file(e.path() / "environ").find(dir) != std::string::npos)
      return true;
  }
  return false;
}

}  // namespace

TEST_CASE(
    "interactive: Ctrl-C during the eval returns to the menu; Ctrl-C there quits, nothing left") {
  const std::string root = KF_SOURCE_ROOT;
  nlohmann::json script = nlohmann::json::array();
  script.push_back(
      {{"body", fake_llm::openai_body(fenced(root + "/tests/kernels/host/spin.cpp"))}});
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);
  kf_live::TestDir scratch("interrupt");
  const std::string& dir = scratch.path;
  Pty term;
  std::vector<std::string> args = kf_live::solve_args(server, {"--call-limit", "60"});
  REQUIRE_MESSAGE(term.spawn(args, child_env(dir + "/runs"), dir, &err), err);

  // The eval is under way once its ranks run (the status line says so).
  bool running = term.wait_for("running 2 ranks", 0, 300);
  INFO("terminal:\n" << term.seen);
  REQUIRE(running);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the ranks start spinning
  size_t at = term.seen.size();
  term.type("\x03");                            // Ctrl-C: the tty sends SIGINT to kforge
  REQUIRE(term.wait_for(cli::kMenu2, at, 60));  // its first line offers to ask again
  CHECK(term.seen.find("interrupted: the eval of turn 1 was stopped", at) != std::string::npos);
  CHECK(term.seen.find("Enter: ask again", at) != std::string::npos);
  CHECK_FALSE(anything_left_in(dir, term.pid()));  // the ranks died with the eval, kforge lives on

  term.type("\x03");  // at the menu: quit
  int code = term.wait_exit(60);
  CHECK(code == 130);
  CHECK_FALSE(anything_left_in(dir));
  std::string traj = find_trajectory(dir + "/runs");
  REQUIRE_FALSE(traj.empty());
  auto summary = events_of(traj, "summary");
  REQUIRE(summary.size() == 1);
  CHECK(summary[0]["exit_reason"] == "interrupted");
  CHECK(summary[0]["interrupt"]["signal"] == "SIGINT");
  auto inter = events_of(traj, "interrupted");
  REQUIRE(inter.size() == 2);
  CHECK(inter[0]["phase"] == "eval");
  CHECK(inter[1]["phase"] == "menu");
  CHECK(events_of(traj, "verdict").empty());
}

TEST_CASE(
    "interactive: accepting a kernel that is not correct writes it and says it is NOT correct") {
  const std::string root = KF_SOURCE_ROOT;
  nlohmann::json script = nlohmann::json::array();
  script.push_back(
      {{"body", fake_llm::openai_body(fenced(root + "/tests/kernels/host/wrong_rank.cpp"))}});
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);
  kf_live::TestDir scratch("accept");
  const std::string& dir = scratch.path;
  Pty term;
  std::vector<std::string> args = kf_live::solve_args(server, {"--out", dir + "/out"});
  REQUIRE_MESSAGE(term.spawn(args, child_env(dir + "/runs"), dir, &err), err);
  bool menu = term.wait_for(cli::kMenu, 0, 300);
  INFO("terminal:\n" << term.seen);
  REQUIRE(menu);
  size_t at = term.seen.size();
  term.type("a\r");
  CHECK(term.wait_exit(60) == 1);
  std::string accepted = dir + "/out/accepted.cpp";
  CHECK(read_text(accepted) == read_text(root + "/tests/kernels/host/wrong_rank.cpp"));
  CHECK_FALSE(fs::exists(dir + "/out/best.cpp"));
  CHECK(term.seen.find("accepted kernel (turn 1): " + accepted, at) != std::string::npos);
  CHECK(term.seen.find("NOT correct", at) != std::string::npos);
  CHECK(term.seen.find("mismatch", at) != std::string::npos);
  auto v = nlohmann::json::parse(read_text(dir + "/out/verdict.json"));
  CHECK(v["solve"]["accepted"]["file"] == accepted);
  CHECK(v["solve"]["accepted"]["status"] == "mismatch");
}
