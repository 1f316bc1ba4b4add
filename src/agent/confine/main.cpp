// kforge-confine: what posix_spawn (sandbox/process.cpp) cannot do in the child before it
// execs the program kforge runs confined (usually bwrap: sandbox/confine.h): die with
// kforge (PR_SET_PDEATHSIG, even when kforge is SIGKILLed), join the run's cgroups, set
// the rlimits, and optionally apply Landlock (writes only beneath the --write paths, the
// same ruleset kforge-rank applies to itself: sandbox/rank/harden.h).
//
//   kforge-confine [--parent PID] [--cgroup DIR]... [--cpu S] [--fsize-mib N] [--as-mib N]
//                  [--write DIR]... -- PROGRAM ARGS...
//   kforge-confine --probe [--write DIR]...    exit 0 when Landlock holds, else 1 and why
//
// Without --write no Landlock is applied (bwrap cannot mount under Landlock). Any step
// that fails is fatal (exit 126): a run is confined as asked or not at all.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <csignal>
#include <fstream>

#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

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
  struct rlimit rl{soft, hard};
  if (setrlimit(what, &rl) == 0) return true;
  fprintf(stderr, "kforge-confine: setrlimit(%s): %s\n", name, strerror(errno));
  return false;
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
      if (a == "--write") writable.push_back(v);
      else if (a == "--cgroup") cgroups.push_back(v);
      else if (a == "--cpu") cpu_s = atol(v.c_str());
      else if (a == "--as-mib") as_mib = atol(v.c_str());
      else if (a == "--parent") parent = atol(v.c_str());
      else fsize_mib = atol(v.c_str());
    } else {
      return usage();
    }
  }
  if (probe) {
    std::string why;
    if (sandbox::rank::apply_landlock(writable.empty() ? std::vector<std::string>{"/dev"} : writable, &why))
      return 0;
    fprintf(stdout, "%s\n", why.c_str());
    return 1;
  }
  if (i >= argc) return usage();

  // Dies with kforge: the signal goes with the exec (bwrap is not set-user-ID) and bwrap's
  // --die-with-parent carries it on into the sandbox. Checked after setting, in case
  // kforge died first.
  if (parent > 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
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
    ok = limit(RLIMIT_CPU, static_cast<rlim_t>(cpu_s), static_cast<rlim_t>(cpu_s + 5), "RLIMIT_CPU") && ok;
  if (!ok) return 126;
  if (!writable.empty()) {
    std::string why;
    if (!sandbox::rank::apply_landlock(writable, &why)) {
      fprintf(stderr, "kforge-confine: Landlock: %s\n", why.c_str());
      return 126;
    }
  }
  execvp(argv[i], argv + i);
  fprintf(stderr, "kforge-confine: %s: %s\n", argv[i], strerror(errno));
  return 127;
}
