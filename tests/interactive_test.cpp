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

namespace fs = std::filesystem;

namespace {

// A child on the slave side of a pseudo terminal; everything it prints lands in seen.
class Pty {
 public:
  ~Pty() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }

  bool spawn(const std::vector<std::string>& args, const std::vector<std::string>& env,
             const std::string& cwd, std::string* err) {
    // Everything the child needs is built before the fork: after it, only exec.
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    struct winsize ws {};
    ws.ws_row = 50;
    ws.ws_col = 160;
    pid_ = forkpty(&fd_, nullptr, nullptr, &ws);
    if (pid_ < 0) return (*err = std::string("forkpty: ") + strerror(errno), false);
    if (pid_ == 0) {
      if (chdir(cwd.c_str()) != 0) _exit(126);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    return true;
  }

  // Reads until `needle` appears at or after `from` in what was seen, the child closes
  // the terminal, or timeout_s passes (a guard against a hang, not a measurement).
  bool wait_for(const std::string& needle, size_t from, double timeout_s) {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (seen.find(needle, from) == std::string::npos) {
      if (eof_ || std::chrono::steady_clock::now() > until) return false;
      pump(100);
    }
    return true;
  }

  void type(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = write(fd_, s.data() + off, s.size() - off);
      if (n <= 0 && errno != EINTR) return;
      if (n > 0) off += static_cast<size_t>(n);
    }
  }

  // Drains the terminal until the child exits; its exit code, or -1 (killed at timeout_s).
  int wait_exit(double timeout_s) {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = 0;
        while (!eof_ && pump(50)) {
        }
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      if (std::chrono::steady_clock::now() > until) return -1;
      pump(100);
    }
  }

  std::string seen;
  int pid() const { return pid_; }

 private:
  // One poll and read; false when nothing came.
  bool pump(int ms) {
    struct pollfd p {
      fd_, POLLIN, 0
    };
    if (poll(&p, 1, ms) <= 0) return false;
    char buf[4096];
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n > 0) {
      seen.append(buf, static_cast<size_t>(n));
      return true;
    }
    if (n == 0 || errno == EIO) eof_ = true;  // EIO: the slave side is closed
    return false;
  }

  int fd_ = -1;
  pid_t pid_ = 0;
  bool eof_ = false;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string fenced(const std::string& path) {
  return "Here is the kernel.\n\n```cpp\n" + read_text(path) + "```\n";
}

// The text of a Chat Completions message (a string, or parts with "text").
std::string message_text(const nlohmann::json& m) {
  const auto& c = m.value("content", nlohmann::json());
  if (c.is_string()) return c.get<std::string>();
  std::string s;
  if (c.is_array())
    for (const auto& part : c)
      if (part.is_object() && part.contains("text")) s += part["text"].get<std::string>();
  return s;
}

std::string last_user_text(const nlohmann::json& request) {
  const auto& msgs = request["body"]["messages"];
  for (auto it = msgs.rbegin(); it != msgs.rend(); ++it)
    if ((*it).value("role", "") == "user") return message_text(*it);
  return "";
}

// The child's environment: this one without anything key-like, plus the test's key.
std::vector<std::string> child_env(const std::string& runs) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    if (name.find("KEY") != std::string::npos || name.find("TOKEN") != std::string::npos ||
        name == "KFORGE_RUNS" || name == "TERM" || name == "NO_COLOR")
      continue;
    env.push_back(kv);
  }
  env.push_back("OPENAI_API_KEY=sk-test");
  env.push_back("KFORGE_RUNS=" + runs);
  env.push_back("TERM=xterm-256color");
  return env;
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

  std::string dir =
      fs::temp_directory_path().string() + "/kf_interactive_" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir + "/runs");
  Pty term;
  std::vector<std::string> args = {std::string(KF_BINARY_DIR) + "/kforge",
                                   "solve",
                                   "all_reduce",
                                   "--backend",
                                   "host",
                                   "--world",
                                   "2",
                                   "--model",
                                   "openai:test-model",
                                   "--base-url",
                                   server.url() + "/v1",
                                   "--max-turns",
                                   "2"};
  REQUIRE_MESSAGE(term.spawn(args, child_env(dir + "/runs"), dir, &err), err);

  // Turn 1: the wrong kernel, its verdict, then the menu.
  bool menu = term.wait_for(cli::kMenu, 0, 300);
  INFO("terminal:\n" << term.seen);
  REQUIRE(menu);
  CHECK(term.seen.find("turn 1 · waiting on") != std::string::npos);
  CHECK(term.seen.find("mismatch") != std::string::npos);
  // `s` shows the kernel with line numbers, then the menu comes back.
  size_t after_menu = term.seen.rfind(cli::kMenu) + 1;
  term.type("s\r");  // Enter on a terminal sends CR; the tty makes it a newline
  REQUIRE(term.wait_for(cli::kMenu, after_menu, 60));
  CHECK(term.seen.find("1  // Fault (problem all_reduce", after_menu) != std::string::npos);
  after_menu = term.seen.rfind(cli::kMenu) + 1;
  term.type("h " + hint + "\r");

  // Turn 2: the correct kernel. A menu after it (if the loop asks again) is answered with
  // accept; either way kforge must end on its own with success.
  int code = -1;
  for (int round = 0; round < 3 && code < 0; ++round) {
    if (term.wait_for(cli::kMenu, after_menu, 300)) {
      after_menu = term.seen.rfind(cli::kMenu) + 1;
      term.type("a\r");
      continue;
    }
    code = term.wait_exit(60);
  }
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
  fs::remove_all(dir);
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
    if (read_text(e.path() / "cmdline").find(dir) != std::string::npos ||
        cwd.find(dir) != std::string::npos ||
        read_text(e.path() / "environ").find(dir) != std::string::npos)
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
  std::string dir =
      fs::temp_directory_path().string() + "/kf_interrupt_" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir + "/runs");
  Pty term;
  std::vector<std::string> args = {std::string(KF_BINARY_DIR) + "/kforge",
                                   "solve",
                                   "all_reduce",
                                   "--backend",
                                   "host",
                                   "--world",
                                   "2",
                                   "--size",
                                   "small",
                                   "--no-time",
                                   "--call-limit",
                                   "60",
                                   "--model",
                                   "openai:test-model",
                                   "--base-url",
                                   server.url() + "/v1"};
  REQUIRE_MESSAGE(term.spawn(args, child_env(dir + "/runs"), dir, &err), err);

  // The eval is under way once its ranks run (the status line says so).
  bool running = term.wait_for("running 2 ranks", 0, 300);
  INFO("terminal:\n" << term.seen);
  REQUIRE(running);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the ranks start spinning
  size_t at = term.seen.size();
  term.type("\x03");  // Ctrl-C: the tty sends SIGINT to kforge
  REQUIRE(term.wait_for(cli::kMenu, at, 60));
  CHECK(term.seen.find("interrupted: the eval of turn 1 was stopped", at) != std::string::npos);
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
  fs::remove_all(dir);
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
  std::string dir = fs::temp_directory_path().string() + "/kf_accept_" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir + "/runs");
  Pty term;
  std::vector<std::string> args = {std::string(KF_BINARY_DIR) + "/kforge",
                                   "solve",
                                   "all_reduce",
                                   "--backend",
                                   "host",
                                   "--world",
                                   "2",
                                   "--size",
                                   "small",
                                   "--no-time",
                                   "--out",
                                   dir + "/out",
                                   "--model",
                                   "openai:test-model",
                                   "--base-url",
                                   server.url() + "/v1"};
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
  fs::remove_all(dir);
}
