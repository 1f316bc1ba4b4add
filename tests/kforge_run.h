// tests/kforge_run.h: the kforge binary run to its end through the shell, for tests that
// only need its exit code and output (tests/kforge_child.h is for signalling one).
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "kf_build_paths.h"

namespace kforge_run {

struct Run {
  int code = -1;
  std::string out;  // stdout (and stderr, unless it went to `err`)
  std::string err;  // stderr, when asked for apart
};

// Runs shell command `cmd`; its stdout into out.
inline Run shell(const std::string& cmd) {
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `kforge ARGS` with `env` prepended (e.g. "KFORGE_PROBLEMS=/x"): stdout and stderr
// together in out, or, with `err_file`, stderr apart in err (written through that file).
inline Run kforge(const std::string& args, const std::string& env = "",
                  const std::string& err_file = "") {
  const std::string redirect = err_file.empty() ? " 2>&1" : " 2>" + err_file;
  Run r = shell(env + " " KF_BINARY_DIR "/kforge " + args + redirect);
  if (!err_file.empty()) {
    std::ifstream in(err_file);
    std::stringstream ss;
    ss << in.rdbuf();
    r.err = ss.str();
  }
  return r;
}

}  // namespace kforge_run
