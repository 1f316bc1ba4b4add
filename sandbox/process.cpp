// sandbox/process.cpp: posix_spawn into a new process group, a poll loop that drains
// the output pipe, watches the clock and asks the caller's watchdog, and a kill of the
// whole group when any of them says so. (The /proc side, finding and killing a tree of
// processes, is sandbox/process_tree.cpp.)
#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <mutex>

#include "deadline.h"
#include "interrupt.h"

namespace sandbox {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A write to a pipe whose reader died must be an error here, not the end of kforge.
void ignore_sigpipe() {
  static std::once_flag once;
  std::call_once(once, [] { std::signal(SIGPIPE, SIG_IGN); });
}

// Looks argv0 up in the PATH the child will have (its env), else the parent's.
std::string resolve(const std::string& argv0, const std::vector<std::string>& env) {
  if (argv0.find('/') != std::string::npos) return argv0;
  std::string path;
  bool found = false;
  for (auto& e : env)
    if (e.rfind("PATH=", 0) == 0) {
      path = e.substr(5);
      found = true;
    }
  if (!found) {
    const char* p = getenv("PATH");
    path = p ? p : "/usr/local/bin:/usr/bin:/bin";
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string cand = dir + "/" + argv0;
    struct stat st;
    if (stat(cand.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(cand.c_str(), X_OK) == 0)
      return cand;
    start = end + 1;
  }
  return "";
}

// Keeps the first half of the cap and a rolling last half.
struct Capture {
  size_t half = 1;
  std::string head, tail;
  size_t elided = 0;
  std::function<void(const char*, size_t)> on_output;
  void add(const char* p, size_t n) {
    if (on_output) on_output(p, n);
    size_t h = std::min(n, half - std::min(half, head.size()));
    head.append(p, h);
    p += h;
    n -= h;
    if (n == 0) return;
    tail.append(p, n);
    if (tail.size() > 2 * half) {
      size_t drop = tail.size() - half;
      elided += drop;
      tail.erase(0, drop);
    }
  }
  std::string finish(size_t* elided_out) {
    if (tail.size() > half) {
      elided += tail.size() - half;
      tail.erase(0, tail.size() - half);
    }
    *elided_out = elided;
    if (elided == 0) return head + tail;
    return head + "\n[... " + std::to_string(elided) + " bytes of output elided ...]\n" + tail;
  }
};

// Reads what is available; returns false at end of file.
bool drain(int fd, Capture* cap) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      cap->add(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? true : false;
  }
}

void record_status(int status, ProcessResult* out) {
  if (WIFEXITED(status)) out->exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out->signal = WTERMSIG(status);
}

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGSYS:
      return "SIGSYS";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGALRM:
      return "SIGALRM";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
  }
  return "signal " + std::to_string(sig);
}

std::string env_entry(const char* name) {
  const char* v = getenv(name);
  return v ? std::string(name) + "=" + v : std::string();
}

namespace {

// Starts spec's argv as exe in a process group of its own, stdin /dev/null, stdout and
// stderr into out_fd, the signals at their defaults; 0 or posix_spawn's error.
int spawn(const ProcessSpec& spec, const std::string& exe, int out_fd, pid_t* pid) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);  // the parent ignores it; the child must not inherit that
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv, envp;
  for (auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int rc = posix_spawn(pid, exe.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return rc;
}

// Whether the running process must be killed now (an interrupt, kforge's deadline, the
// spec's time limit or its watchdog), with why in *out.
bool must_kill(const ProcessSpec& spec, Clock::time_point t0, ProcessResult* out) {
  if (int sig = interrupt_signal()) {
    out->interrupted = sig;
    out->kill_reason = "interrupted by " + signal_name(sig);
  } else if (deadline_passed()) {
    out->deadline = true;
    out->kill_reason = "kforge's deadline (the run's wall-time budget) passed";
  } else if (spec.limit_s > 0 && since(t0) > spec.limit_s) {
    out->timed_out = true;
    char buf[64];
    snprintf(buf, sizeof buf, "time limit of %g s", spec.limit_s);
    out->kill_reason = buf;
  } else if (std::string reason; spec.poll && spec.poll(&reason)) {
    out->kill_reason = reason.empty() ? "killed by the watchdog" : reason;
  } else {
    return false;
  }
  out->killed = true;
  return true;
}

// Reads the output while pid runs, killing its tree when must_kill says; its wait status.
int watch(const ProcessSpec& spec, pid_t pid, int fd, Clock::time_point t0, Capture* cap,
          bool* pipe_open, ProcessResult* out) {
  int status = 0;
  for (;;) {
    if (*pipe_open) {
      struct pollfd p {
        fd, POLLIN, 0
      };
      if (poll(&p, 1, 20) > 0) *pipe_open = drain(fd, cap);
    } else {
      usleep(20000);
    }
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    if (must_kill(spec, t0, out)) {
      out->killed_pids = kill_tree(pid);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return status;
    }
  }
}

}  // namespace

bool run_process(const ProcessSpec& spec, ProcessResult* out, std::string* err) {
  ignore_sigpipe();
  *out = ProcessResult{};
  if (spec.argv.empty()) {
    *err = "run_process: empty argv";
    return false;
  }
  std::string exe = resolve(spec.argv[0], spec.env);
  if (exe.empty()) {
    *err = spec.argv[0] + ": not found in PATH";
    return false;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *err = std::string("pipe: ") + strerror(errno);
    return false;
  }
  auto t0 = Clock::now();
  pid_t pid = 0;
  int rc = spawn(spec, exe, fds[1], &pid);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    *err = exe + ": cannot start: " + strerror(rc);
    return false;
  }
  out->pid = pid;
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);

  Capture cap;
  cap.half = std::max<size_t>(spec.output_cap / 2, 1);
  cap.on_output = spec.on_output;
  bool pipe_open = true;
  record_status(watch(spec, pid, fds[0], t0, &cap, &pipe_open, out), out);
  if (spec.kill_group_on_exit || out->killed) killpg(pid, SIGKILL);

  // Whatever was still in the pipe. A leftover that kept it open is dead by now (or was
  // outside the group); bound the wait either way.
  auto t1 = Clock::now();
  while (pipe_open && since(t1) < 2.0) {
    struct pollfd p {
      fds[0], POLLIN, 0
    };
    if (poll(&p, 1, 50) > 0)
      pipe_open = drain(fds[0], &cap);
    else if (!spec.kill_group_on_exit && !out->killed)
      break;
  }
  close(fds[0]);
  out->output = cap.finish(&out->elided_bytes);
  out->seconds = since(t0);
  return true;
}

}  // namespace sandbox
