// kforge-confine: runs one program with the limits the agent's bash commands get
// (agent/bash_env.h), because posix_spawn (sandbox/process.cpp) cannot set them in the
// child. It sets the rlimits, applies Landlock (writes only beneath the --write paths,
// the same ruleset kforge-rank applies to itself: sandbox/rank/harden.h) and execs.
//
//   kforge-confine [--cpu S] [--fsize-mib N] [--write DIR]... -- PROGRAM ARGS...
//   kforge-confine --probe [--write DIR]...    exit 0 when Landlock holds, else 1 and why
//
// Without --write no Landlock is applied. A Landlock failure with --write is fatal
// (exit 126): the caller probed first and asked for it.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "rank/harden.h"

namespace {

int usage() {
  fprintf(stderr,
          "usage: kforge-confine [--cpu S] [--fsize-mib N] [--write DIR]... -- PROGRAM ARGS...\n"
          "       kforge-confine --probe [--write DIR]...\n");
  return 2;
}

bool limit(int what, rlim_t soft, rlim_t hard, const char* name) {
  struct rlimit rl{soft, hard};
  if (setrlimit(what, &rl) == 0) return true;
  fprintf(stderr, "kforge-confine: setrlimit(%s): %s\n", name, strerror(errno));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> writable;
  long cpu_s = 0, fsize_mib = 0;
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
    } else if ((a == "--write" || a == "--cpu" || a == "--fsize-mib") && i + 1 < argc) {
      std::string v = argv[++i];
      if (a == "--write") writable.push_back(v);
      else if (a == "--cpu") cpu_s = atol(v.c_str());
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

  bool ok = limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
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
