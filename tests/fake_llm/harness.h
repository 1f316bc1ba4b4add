// tests/fake_llm/harness.h: runs fake_llm_server as a real child process for a test:
// writes the script, starts the server with posix_spawn, waits for its port, reads its
// request log, and kills it (by its pid) when the test is done.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kf_build_paths.h"

extern char** environ;

namespace fake_llm {

class Server {
 public:
  Server() = default;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server() {
    stop();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Starts the server on script (a JSON array of steps). Return false on error.
  bool start(const nlohmann::json& script, std::string* err) {
    char tmpl[] = "/tmp/kforge-fake-llm-XXXXXX";
    if (!mkdtemp(tmpl)) return (*err = "mkdtemp failed", false);
    dir_ = tmpl;
    std::ofstream(dir_ + "/script.json") << script.dump(1);
    std::string exe = std::string(KF_BINARY_DIR) + "/fake_llm_server";
    std::vector<std::string> args = {exe,
                                     "--script",
                                     dir_ + "/script.json",
                                     "--log",
                                     dir_ + "/log.jsonl",
                                     "--port-file",
                                     dir_ + "/port",
                                     "--idle-s",
                                     "20",
                                     "--stall-s",
                                     "20"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    std::string out = dir_ + "/stdout";
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = posix_spawn(&pid_, exe.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
      return (*err = "cannot start " + exe + ": build the fake_llm_server target", false);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      std::ifstream in(dir_ + "/port");
      if (in >> port_) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    *err = "fake_llm_server wrote no port within 10 s";
    return false;
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Every request the server received so far, in order. A line the server is still
  // writing (a request of more than the stream's buffer goes out in pieces) is not one
  // yet: only lines that end in a newline count.
  std::vector<nlohmann::json> requests() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(dir_ + "/log.jsonl", std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (size_t at = 0, nl; (nl = s.find('\n', at)) != std::string::npos; at = nl + 1)
      if (nl > at) out.push_back(nlohmann::json::parse(s.substr(at, nl - at)));
    return out;
  }

  // Waits up to timeout_s for the server to exit on its own (script spent); its exit
  // status, or -1 when it had to be killed.
  int wait_exit(double timeout_s) {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (pid_ > 0 && std::chrono::steady_clock::now() < until) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = 0;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop();
    return -1;
  }

  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

 private:
  pid_t pid_ = 0;
  int port_ = 0;
  std::string dir_;
};

}  // namespace fake_llm
