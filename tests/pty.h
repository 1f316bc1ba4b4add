// tests/pty.h: kforge on a pseudo terminal, for the interactive tests: the child on the
// slave side (forkpty, a window size of the test's choosing), everything it prints
// collected in `seen`, keys typed as a person would; and the helpers those tests share.
#pragma once

#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sandbox/text.h"

extern char** environ;

namespace kf_pty {

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
             const std::string& cwd, std::string* err, int rows = 50, int cols = 160) {
    // Everything the child needs is built before the fork: after it, only exec.
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    struct winsize ws {};
    ws.ws_row = static_cast<unsigned short>(rows);
    ws.ws_col = static_cast<unsigned short>(cols);
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

  // Just past the first `needle` at or after `from` in what was seen (its end if none): where
  // to look for what comes after it, which may already have been read with it.
  size_t after(const std::string& needle, size_t from) const {
    size_t at = seen.find(needle, from);
    return at == std::string::npos ? seen.size() : at + needle.size();
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

using sandbox::read_text;

inline std::string fenced(const std::string& path) {
  return "Here is the kernel.\n\n```cpp\n" + read_text(path) + "```\n";
}

// The text of a Chat Completions message (a string, or parts with "text").
inline std::string message_text(const nlohmann::json& m) {
  const auto& c = m.value("content", nlohmann::json());
  if (c.is_string()) return c.get<std::string>();
  std::string s;
  if (c.is_array())
    for (const auto& part : c)
      if (part.is_object() && part.contains("text")) s += part["text"].get<std::string>();
  return s;
}

inline std::string last_user_text(const nlohmann::json& request) {
  const auto& msgs = request["body"]["messages"];
  for (auto it = msgs.rbegin(); it != msgs.rend(); ++it)
    if ((*it).value("role", "") == "user") return message_text(*it);
  return "";
}

// The child's environment: this one without anything key-like, plus the test's key.
inline std::vector<std::string> child_env(const std::string& runs) {
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

}  // namespace kf_pty
