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
#include "sandbox/verdict_read.h"

namespace kforge_run {

// The source tree, where the tests find problems/ and the kernels they evaluate.
inline const std::string kRoot = KF_SOURCE_ROOT;

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

// The verdict in a `--json` run's output (lines before the JSON skipped), through the one
// reader of verdicts (sandbox/verdict_read.h). False with *err when there is none or it
// does not read.
inline bool verdict_in(const std::string& out, sandbox::Verdict* v, std::string* err) {
  size_t at = out.find('{');
  if (at == std::string::npos) return (*err = "no JSON in the output", false);
  nlohmann::json j = nlohmann::json::parse(out.substr(at), nullptr, false);
  return sandbox::verdict_from_json(j, v, err);
}

// The status name of that verdict, or "no verdict".
inline std::string status_of(const std::string& out) {
  sandbox::Verdict v;
  std::string err;
  return verdict_in(out, &v, &err) ? sandbox::status_name(v.status) : "no verdict";
}
inline std::string status_of(const Run& r) {
  return status_of(r.out);
}

}  // namespace kforge_run
