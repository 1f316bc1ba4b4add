// kforge-confine: what posix_spawn (sandbox/process.cpp) cannot do in the child before it
// runs the program kforge runs confined (usually bwrap: sandbox/confine.h): with --parent,
// stay between kforge and the program and end the whole run when kforge dies
// (PR_SET_PDEATHSIG, even when kforge is SIGKILLed); join the run's cgroups, set
// the rlimits, and optionally apply Landlock (writes only beneath the --write paths, the
// same ruleset kforge-rank applies to itself: sandbox/rank/harden.h).
//
//   kforge-confine [--parent PID] [--cgroup DIR]... [--cpu S] [--fsize-mib N] [--as-mib N]
//                  [--write DIR]... -- PROGRAM ARGS...
//   kforge-confine --probe [--write DIR]...    exit 0 when Landlock holds, else 1 and why
//
// Without --write no Landlock is applied (bwrap cannot mount under Landlock). Any step
// that fails is fatal (exit 126): a run is confined as asked or not at all.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "process.h"
#include "rank/harden.h"

namespace {

int usage() {
  fprintf(stderr,
          "usage: kforge-confine [--parent PID] [--cgroup DIR]... [--cpu S] [--fsize-mib N]\n"
          "                      [--as-mib N] [--write DIR]... -- PROGRAM ARGS...\n"
          "       kforge-confine --probe [--write DIR]...\n");
  return 2;
}

bool limit(int what, rlim_t soft, rlim_t hard, const char* name) {
  struct rlimit rl {
    soft, hard
  };
  if (setrlimit(what, &rl) == 0) return true;
  fprintf(stderr, "kforge-confine: setrlimit(%s): %s\n", name, strerror(errno));
  return false;
}

std::atomic<int> g_stop{0};
extern "C" void on_stop(int sig) {
  g_stop.store(sig);
}

// Ends every process of the run: the cgroup's when there is one (this process first
// moves to the parent group, so that it can then remove the emptied one), else the
// tree under child.
void end_run(int child, const std::vector<std::string>& cgroups) {
  for (const std::string& d : cgroups) {
    std::ofstream(std::filesystem::path(d).parent_path() / "cgroup.procs") << getpid() << "\n";
    if (std::filesystem::exists(d + "/cgroup.kill")) std::ofstream(d + "/cgroup.kill") << "1\n";
  }
  sandbox::kill_tree(child);
  for (const std::string& d : cgroups) {
    for (int round = 0; round < 500; ++round) {
      std::ifstream in(d + "/cgroup.procs");
      int p = 0, n = 0;
      while (in >> p) n += kill(p, SIGKILL) == 0;
      if (n == 0) break;
      usleep(10000);
    }
    // The last tasks may still be leaving the group: EBUSY for a moment.
    for (int round = 0; round < 200 && rmdir(d.c_str()) != 0 && errno == EBUSY; ++round)
      usleep(10000);
  }
}

// Runs the program as a child and waits for it, mirroring how it ended. SIGTERM (which
// PR_SET_PDEATHSIG sends when kforge dies, even by SIGKILL), SIGINT or SIGHUP end the
// whole run first. bwrap's own --die-with-parent alone was seen to miss now and then.
int supervise(char** argv, const std::vector<std::string>& cgroups) {
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
  pid_t child = fork();
  if (child < 0) return 126;
  if (child == 0) {
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) signal(sig, SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    execvp(argv[0], argv);
    fprintf(stderr, "kforge-confine: %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int status = 0;
  for (;;) {
    if (g_stop.load()) {
      end_run(child, cgroups);
      waitpid(child, &status, 0);
      return 128 + g_stop.load();
    }
    pid_t w = waitpid(child, &status, 0);
    if (w == child) break;
    if (w < 0 && errno != EINTR) return 126;
  }
  if (WIFSIGNALED(status)) {
    signal(WTERMSIG(status), SIG_DFL);
    kill(getpid(), WTERMSIG(status));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 126;
}

// Moves this process into a cgroup; what it execs and every child stay there.
bool join_cgroup(const std::string& dir) {
  std::ofstream out(dir + "/cgroup.procs");
  out << getpid() << "\n";
  if (out.flush()) return true;
  fprintf(stderr, "kforge-confine: cannot join the cgroup %s: %s\n", dir.c_str(), strerror(errno));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> writable;
  std::vector<std::string> cgroups;
  long cpu_s = 0, fsize_mib = 0, as_mib = 0, parent = 0;
  bool probe = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--probe") {
      probe = true;
    } else if ((a == "--write" || a == "--cpu" || a == "--fsize-mib" || a == "--as-mib" ||
                a == "--cgroup" || a == "--parent") &&
               i + 1 < argc) {
      std::string v = argv[++i];
      if (a == "--write")
        writable.push_back(v);
      else if (a == "--cgroup")
        cgroups.push_back(v);
      else if (a == "--cpu")
        cpu_s = atol(v.c_str());
      else if (a == "--as-mib")
        as_mib = atol(v.c_str());
      else if (a == "--parent")
        parent = atol(v.c_str());
      else
        fsize_mib = atol(v.c_str());
    } else {
      return usage();
    }
  }
  if (probe) {
    std::string why;
    if (sandbox::rank::apply_landlock(
            writable.empty() ? std::vector<std::string>{"/dev"} : writable, &why))
      return 0;
    fprintf(stdout, "%s\n", why.c_str());
    return 1;
  }
  if (i >= argc) return usage();

  // Dies with kforge, taking the run along (supervise). Checked after setting, in case
  // kforge died first.
  if (parent > 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) return 126;
  }
  bool ok = true;
  for (const std::string& d : cgroups) ok = join_cgroup(d) && ok;
  ok = limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE") && ok;
  if (as_mib > 0) {
    rlim_t b = static_cast<rlim_t>(as_mib) << 20;
    ok = limit(RLIMIT_AS, b, b, "RLIMIT_AS") && ok;
  }
  if (fsize_mib > 0) {
    rlim_t b = static_cast<rlim_t>(fsize_mib) << 20;
    ok = limit(RLIMIT_FSIZE, b, b, "RLIMIT_FSIZE") && ok;
  }
  // SIGXCPU at the soft limit, SIGKILL at the hard one: a backstop behind the wall clock.
  if (cpu_s > 0)
    ok = limit(RLIMIT_CPU, static_cast<rlim_t>(cpu_s), static_cast<rlim_t>(cpu_s + 5),
               "RLIMIT_CPU") &&
         ok;
  if (!ok) return 126;
  if (!writable.empty()) {
    std::string why;
    if (!sandbox::rank::apply_landlock(writable, &why)) {
      fprintf(stderr, "kforge-confine: Landlock: %s\n", why.c_str());
      return 126;
    }
  }
  if (parent > 0) return supervise(argv + i, cgroups);
  execvp(argv[i], argv + i);
  fprintf(stderr, "kforge-confine: %s: %s\n", argv[i], strerror(errno));
  return 127;
}
