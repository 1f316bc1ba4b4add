// sandbox/rank/reaper.cpp
#include "reaper.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "rank_status.h"

namespace sandbox::rank {
namespace {

volatile sig_atomic_t g_child = 0;

// What mpirun (or the watchdog, or a terminal) sends the rank goes on to the rank.
void forward(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

// <dir of the first job.json>/status/rank<R>.exit, or "" when argv names no job. A warm
// set's ranks (--serve CTL) outlive their first job: CTL/status/rank<R>.exit.
std::string exit_path(int argc, char** argv, const char* rank) {
  if (argc < 2) return "";
  if (std::strcmp(argv[1], "--serve") == 0)
    return argc > 2 ? std::string(argv[2]) + "/status/rank" + rank + ".exit" : "";
  std::string job = argv[1];
  size_t slash = job.rfind('/');
  std::string dir = slash == std::string::npos ? "." : job.substr(0, slash);
  return dir + "/status/rank" + rank + ".exit";
}

// Written whole under a temporary name and renamed, so a reader sees all of it or none.
void write_exit(const std::string& path, const RankExit& e) {
  std::string text = nlohmann::json(e).dump() + "\n";
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (ok) rename(tmp.c_str(), path.c_str());
}

[[noreturn]] void end_like(const RankExit& e) {
  if (e.signal == 0) _exit(e.exit_code);
  // The same death, without a core file of this small process.
  rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  signal(e.signal, SIG_DFL);
  sigset_t all;
  sigemptyset(&all);
  sigaddset(&all, e.signal);
  sigprocmask(SIG_UNBLOCK, &all, nullptr);
  raise(e.signal);
  _exit(128 + e.signal);
}

}  // namespace

void fork_reaper(int argc, char** argv) {
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  std::string path = rank ? exit_path(argc, argv, rank) : "";
  if (path.empty()) return;
  pid_t parent = getpid();
  pid_t child = fork();
  if (child < 0) return;  // no record then, but the rank runs
  if (child == 0) {
    // Die with the reaper: mpirun's SIGKILL reaches only the process it started.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    return;
  }
  g_child = child;
  struct sigaction sa {};
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGTSTP})
    sigaction(s, &sa, nullptr);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  RankExit e;
  e.pid = child;
  e.ended_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  if (WIFSIGNALED(status))
    e.signal = WTERMSIG(status);
  else
    e.exit_code = WEXITSTATUS(status);
  write_exit(path, e);
  end_like(e);
}

}  // namespace sandbox::rank
