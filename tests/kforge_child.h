// tests/kforge_child.h: the kforge binary as a child that a test signals while it works:
// started in the background (posix_spawn, output into a file), watched through its output
// and its process tree, sent a signal, then waited for. And what a test needs to prove
// that nothing kforge started outlived it: the processes whose command line, working
// directory or environment names a test's own folder.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/process.h"
#include "sandbox/text.h"

extern char** environ;

namespace kforge_child {

using Clock = std::chrono::steady_clock;

inline std::string slurp(const std::string& path) {
  return sandbox::read_text(path);
}

// The short name of a process (/proc/PID/comm), "" when it is gone.
inline std::string comm(int pid) {
  std::string c = sandbox::read_proc_file("/proc/" + std::to_string(pid) + "/comm");
  while (!c.empty() && c.back() == '\n') c.pop_back();
  return c;
}

// Live processes (not this one) whose command line, working directory or environment
// contains marker: whatever a run in the test's folder started, wherever it was reparented.
inline std::vector<int> processes_naming(const std::string& marker) {
  std::vector<int> out;
  for (auto& e : std::filesystem::directory_iterator("/proc")) {
    int pid = atoi(e.path().filename().c_str());
    if (pid <= 0 || pid == getpid() || !sandbox::process_alive(pid)) continue;
    std::string p = e.path().string();
    std::error_code ec;
    std::string cwd = std::filesystem::read_symlink(p + "/cwd", ec).string();
    if (sandbox::read_proc_file(p + "/cmdline").find(marker) != std::string::npos ||
        cwd.find(marker) != std::string::npos ||
        sandbox::read_proc_file(p + "/environ").find(marker) != std::string::npos)
      out.push_back(pid);
  }
  return out;
}

class Child {
 public:
  ~Child() {
    if (pid_ > 0) {
      sandbox::kill_tree(pid_);
      waitpid(pid_, nullptr, 0);
    }
  }

  // Starts argv with env; stdout and stderr go to out_file. False with *err.
  bool start(const std::vector<std::string>& argv, const std::vector<std::string>& env,
             const std::string& out_file, std::string* err) {
    out_file_ = out_file;
    std::vector<char*> a, e;
    for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    for (auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
    e.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    int rc = posix_spawn(&pid_, a[0], &fa, nullptr, a.data(), e.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return (*err = "cannot start " + argv[0], false);
    return true;
  }

  int pid() const { return pid_; }
  std::string output() const { return slurp(out_file_); }

  // Polls every 20 ms until done() says so or the child exits; a guard against a hang of
  // timeout_s, not a measurement. True when done() said so.
  bool wait_until(const std::function<bool()>& done, double timeout_s) {
    auto until = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (Clock::now() < until) {
      if (done()) return true;
      if (!sandbox::process_alive(pid_)) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // A live descendant whose comm is name, or 0.
  int descendant_named(const std::string& name) const {
    for (int p : sandbox::descendants(pid_))
      if (comm(p) == name) return p;
    return 0;
  }

  // Sends sig and waits up to timeout_s for the exit; the exit code (128+N when a signal
  // killed it), or -1 when it had to be killed. *seconds: from the signal to the exit.
  int signal_and_wait(int sig, double timeout_s, double* seconds) {
    auto t0 = Clock::now();
    kill(pid_, sig);
    for (;;) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        *seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        pid_ = 0;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      if (Clock::now() - t0 > std::chrono::duration<double>(timeout_s)) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  pid_t pid_ = 0;
  std::string out_file_;
};

}  // namespace kforge_child
