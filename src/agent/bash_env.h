// agent/bash_env.h: where the agent's bash commands run (mode `agent`, mini-swe-agent's
// local environment). Each command is an independent `bash -c` in the workspace: no
// state carries over between commands except the files they leave. The commands are as
// untrusted as kernels, so they get what the ranks get:
//  - the scrubbed environment of sandbox::scrubbed_env (nothing that looks like a key,
//    token, secret or password; HOME inside the workspace, TMPDIR in <ws>/.kforge/tmp)
//    plus PAGER=cat, MANPAGER=cat, LESS=-R, PIP_PROGRESS_BAR=off, TQDM_DISABLE=1;
//  - PATH starting with <ws>/.kforge/bin, where a `kforge` wrapper execs the real
//    binary (extra_env KFORGE_BIN=...) with KFORGE_RUNS and KFORGE_CACHE in
//    <ws>/.kforge, so `kforge eval PROBLEM kernel.cu` works inside (eval and baseline
//    only: `kforge tune` would write the problem's expert kernels there);
//  - stdin /dev/null, stdout+stderr together, its own process group, and the whole tree
//    SIGKILLed at the time limit;
//  - the sandbox of sandbox/confine.h: bubblewrap with its own PID, network and mount
//    namespaces, a read-only view of the toolchain, kforge's programs, primitives/ and
//    of each problem only problem.json, the baselines and the oracle (no solution, no
//    example), writes only beneath the workspace, no network (loopback of its own), no
//    kforge process in sight (so no /proc/<pid>/environ with a key), a cgroup memory
//    and pids limit where the OS allows, RLIMIT_CPU (timeout + 60 s per process), and
//    death with kforge. isolation() says what held.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "sandbox/confine.h"

namespace agent {

// The line that submits: the first line of a command's output, with exit code 0.
inline constexpr const char* kSubmitSentinel = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

// Output over this many characters keeps the first and last kElideKeep of them.
inline constexpr size_t kElideOver = 10000;
inline constexpr size_t kElideKeep = 5000;

struct BashResult {
  int returncode = -1;  // bash's exit code; 128+N when signal N ended it (as bash reports)
  // stdout+stderr, valid UTF-8 (bad bytes become U+FFFD). When elided_chars > 0: the
  // first kElideKeep bytes, a line "[... N characters elided ...]", the last kElideKeep.
  std::string output;
  size_t elided_chars = 0;
  bool timed_out = false;  // killed at the time limit (returncode 137)
  bool submitted = false;  // first output line is kSubmitSentinel and returncode 0
  std::string submission;  // when submitted: the output after the sentinel line
};

class BashEnv {
 public:
  // Creates the workspace (and <ws>/.kforge/{bin,tmp,runs,cache}) and the kforge wrapper.
  // extra_env entries "K=V" are set last (never one that looks secret); KFORGE_BIN names
  // the real kforge (default: this process when it is kforge). False (with *err) when
  // the sandbox cannot be had (confine.h says how to get it).
  bool init(const std::string& workspace, const std::vector<std::string>& extra_env,
            double timeout_s, std::string* err);
  // on_output, when given, gets the output as it comes (the result holds all of it too).
  BashResult run(const std::string& command,
                 const std::function<void(const std::string&)>& on_output = {});
  const std::string& workspace() const { return workspace_; }
  // "bwrap: reads only ..." or why not; for the record.
  const std::string& isolation() const { return isolation_; }
  const std::vector<std::string>& env() const { return env_; }

 private:
  std::string workspace_, isolation_;
  std::vector<std::string> env_;
  double timeout_s_ = 30;
  sandbox::Confinement jail_;
};

// The pure parts, for tests.
std::string valid_utf8(const std::string& s);
// Elides s (already capped by the caller at head+tail) to the rule above; `dropped` is
// how many bytes were dropped before s was seen (between its head and tail).
std::string elide(const std::string& s, size_t dropped, size_t* elided_chars);
// True when output submits; *submission gets the rest.
bool is_submission(const std::string& output, int returncode, std::string* submission);

}  // namespace agent
