// agent/bash_env_test.cpp: the agent's bash commands, run for real.
#include "agent/bash_env.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kf_build_paths.h"
#include "sandbox/process.h"

namespace fs = std::filesystem;

namespace {

// The folders fresh_dir made, removed when the test binary exits (the environments that
// use them are returned by value, so no one case owns its folder's end).
struct BashDirs {
  std::vector<std::string> made;
  ~BashDirs() {
    std::error_code ec;
    for (const std::string& d : made) fs::remove_all(d, ec);
  }
};
BashDirs& bash_dirs() {
  static BashDirs dirs;
  return dirs;
}

std::string fresh_dir(const std::string& name) {
  std::string d =
      fs::temp_directory_path().string() + "/kf_bash_" + name + "_" + std::to_string(getpid());
  fs::remove_all(d);
  bash_dirs().made.push_back(d);
  return d;
}

std::string kforge_bin() {
  return std::string(KF_BINARY_DIR) + "/kforge";
}

agent::BashEnv make_env(const std::string& name, double timeout_s = 20) {
  agent::BashEnv env;
  std::string err;
  bool ok = env.init(fresh_dir(name), {"KFORGE_BIN=" + kforge_bin()}, timeout_s, &err);
  INFO(err);
  REQUIRE(ok);
  return env;
}

}  // namespace

TEST_CASE("bash_env: echo, exit codes, cwd is the workspace, stderr joins stdout") {
  auto env = make_env("echo");
  auto r = env.run("echo hello");
  CHECK(r.returncode == 0);
  CHECK(r.output == "hello\n");
  CHECK_FALSE(r.submitted);
  CHECK_FALSE(r.timed_out);

  CHECK(env.run("exit 3").returncode == 3);
  CHECK(env.run("kill -TERM $$").returncode == 128 + 15);
  CHECK(env.run("pwd").output == env.workspace() + "\n");
  CHECK(env.run("echo out; echo err >&2").output == "out\nerr\n");
  // Each command is its own shell: nothing but files carries over.
  env.run("echo x > file.txt; export FOO=1; cd /");
  CHECK(env.run("echo \"[$FOO]\"; cat file.txt").output == "[]\nx\n");
  CHECK(env.run("cat").output == "");  // stdin is /dev/null, so this ends at once
}

TEST_CASE("bash_env: the time limit kills the command and its grandchildren") {
  auto env = make_env("timeout", 1.0);
  // One grandchild in the group, one that left it with setsid.
  // (Their pids are the sandbox's own; their command lines name them from out here.)
  auto r = env.run("sleep 300.25 & setsid sleep 300.5 & sleep 300");
  CHECK(r.timed_out);
  CHECK(r.returncode == 128 + 9);
  CHECK_FALSE(r.submitted);
  CHECK(sandbox::wait_none_naming("sleep 300.25", 5.0));
  CHECK(sandbox::wait_none_naming("sleep 300.5", 5.0));
}

TEST_CASE("bash_env: long output is elided to head and tail with the count") {
  auto env = make_env("elide");
  // 30,000 characters: 'a' x 5000, 'b' x 20000, 'c' x 5000.
  auto r = env.run(
      "head -c 5000 /dev/zero | tr '\\0' a; head -c 20000 /dev/zero | tr '\\0' b;"
      " head -c 5000 /dev/zero | tr '\\0' c");
  CHECK(r.returncode == 0);
  CHECK(r.elided_chars == 20000);
  CHECK(r.output.substr(0, 5000) == std::string(5000, 'a'));
  CHECK(r.output.substr(r.output.size() - 5000) == std::string(5000, 'c'));
  CHECK(r.output.find("20000 characters elided") != std::string::npos);
  CHECK(r.output.find('b') == std::string::npos);

  auto at = env.run("head -c 10000 /dev/zero | tr '\\0' x");
  CHECK(at.elided_chars == 0);
  CHECK(at.output == std::string(10000, 'x'));
  auto over = env.run("head -c 10001 /dev/zero | tr '\\0' x");
  CHECK(over.elided_chars == 1);
}

TEST_CASE("bash_env: elide and valid_utf8 on their own") {
  size_t n = 0;
  CHECK(agent::elide("short", 0, &n) == "short");
  CHECK(n == 0);
  std::string big = std::string(6000, 'h') + std::string(6000, 't');
  std::string e = agent::elide(big, 0, &n);
  CHECK(n == 2000);
  CHECK(e.rfind(std::string(5000, 'h'), 0) == 0);
  CHECK(e.find("[... 2000 characters elided ...]") != std::string::npos);

  CHECK(agent::valid_utf8("plain ä €") == "plain ä €");
  CHECK(agent::valid_utf8("a\xff"
                          "b") ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(agent::valid_utf8("cut \xE2\x82") == "cut \xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(agent::valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
}

TEST_CASE("bash_env: the sentinel line submits, with exit code 0 only") {
  auto env = make_env("submit");
  auto r = env.run("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo kernel.cu");
  CHECK(r.submitted);
  CHECK(r.submission == "kernel.cu\n");
  CHECK_FALSE(env.run("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; exit 1").submitted);
  CHECK_FALSE(env.run("echo first; echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT").submitted);

  std::string sub;
  CHECK(agent::is_submission("\n  COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT  \nrest", 0, &sub));
  CHECK(sub == "rest");
  CHECK_FALSE(agent::is_submission("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT_NOT", 0, &sub));
  CHECK_FALSE(agent::is_submission("", 0, &sub));
}

TEST_CASE("bash_env: no key in the environment; HOME and TMPDIR in the workspace; pagers off") {
  setenv("OPENAI_API_KEY", "sk-planted-in-test", 1);
  setenv("KF_TEST_GITHUB_TOKEN", "ghp-planted", 1);
  auto env = make_env("env");
  std::string err;
  agent::BashEnv env2;
  // A key handed in through extra_env is dropped too.
  REQUIRE(env2.init(fresh_dir("env2"), {"KFORGE_BIN=" + kforge_bin(), "MY_SECRET=s3"}, 20, &err));
  unsetenv("OPENAI_API_KEY");
  unsetenv("KF_TEST_GITHUB_TOKEN");

  auto r = env.run("env");
  CHECK(r.returncode == 0);
  CHECK(r.output.find("sk-planted") == std::string::npos);
  CHECK(r.output.find("ghp-planted") == std::string::npos);
  CHECK(env2.run("env").output.find("s3") == std::string::npos);
  CHECK(env.run("echo $HOME").output == env.workspace() + "\n");
  CHECK(env.run("echo $TMPDIR").output.rfind(env.workspace() + "/", 0) == 0);
  CHECK(env.run("echo $PAGER $MANPAGER $TQDM_DISABLE").output == "cat cat 1\n");
  CHECK(env.run("ulimit -c").output == "0\n");
  CHECK(env.run("ulimit -t; ulimit -f").output == "80\n1048576\n");  // 20 s + 60 s of CPU; 1 GiB
}

TEST_CASE("bash_env: kforge works inside through the wrapper, without keys") {
  auto env = make_env("wrapper");
  auto r = env.run("command -v kforge && kforge --help");
  INFO(r.output);
  CHECK(r.returncode == 0);
  CHECK(r.output.rfind(env.workspace() + "/.kforge/bin/kforge\n", 0) == 0);
  CHECK(r.output.find("eval") != std::string::npos);

  // A key the command exports itself does not reach kforge (or a kernel it runs): the
  // wrapper around a stand-in for kforge that prints its environment.
  std::string dir = fresh_dir("printenv");
  fs::create_directories(dir);
  std::string printer = dir + "/printenv.sh";
  std::ofstream(printer) << "#!/bin/sh\necho \"args: $*\"\nenv\n";
  fs::permissions(printer, fs::perms::owner_all);
  agent::BashEnv env3;
  std::string err;
  REQUIRE(env3.init(fresh_dir("wrapper3"), {"KFORGE_BIN=" + printer}, 20, &err));
  auto leaked = env3.run("export ANTHROPIC_API_KEY=sk-x MY_TOKEN=t; kforge eval all_reduce k.cpp");
  CHECK(leaked.returncode == 0);
  CHECK(leaked.output.find("args: eval all_reduce k.cpp") != std::string::npos);
  CHECK(leaked.output.find("KFORGE_RUNS=" + env3.workspace() + "/.kforge/runs") !=
        std::string::npos);
  CHECK(leaked.output.find("sk-x") == std::string::npos);
  CHECK(leaked.output.find("MY_TOKEN") == std::string::npos);
  // tune would write the problem's expert kernels into the workspace, problems names
  // their folders: refused.
  for (const char* sub : {"tune", "solve", "show", "replay", "problems"}) {
    auto refused = env3.run(std::string("kforge ") + sub + " all_reduce");
    CHECK(refused.returncode == 2);
    CHECK(refused.output.find("not available in the agent's workspace") != std::string::npos);
    CHECK(refused.output.find("args:") == std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("bash_env: writes outside the workspace fail, and outside files are not even there") {
  auto env = make_env("jail");
  INFO("isolation: " << env.isolation());
  REQUIRE(env.isolation().rfind("bwrap:", 0) == 0);
  std::string outside = fresh_dir("outside");
  fs::create_directories(outside);
  std::ofstream(outside + "/planted") << "planted\n";
  auto r = env.run("echo x > " + outside + "/f; echo rc=$?; cat " + outside +
                   "/planted; echo y > inside.txt && echo ok");
  CHECK(r.output.find("rc=1") != std::string::npos);
  CHECK(r.output.find("planted\n") == std::string::npos);
  CHECK(r.output.find("ok") != std::string::npos);
  CHECK_FALSE(fs::exists(outside + "/f"));
  CHECK(fs::exists(env.workspace() + "/inside.txt"));
  fs::remove_all(outside);
}

TEST_CASE("bash_env: kforge eval runs a kernel from inside, confined") {
  auto env = make_env("eval", 300);
  // The checkout's examples are out of the command's sight: the test hands it the kernel.
  fs::copy_file(std::string(KF_SOURCE_ROOT) + "/problems/all_reduce/examples/host.cpp",
                env.workspace() + "/kernel.cpp");
  auto r =
      env.run("kforge eval all_reduce kernel.cpp --backend host --world 2 --size small --no-time");
  INFO(r.output);
  INFO("isolation: " << env.isolation());
  CHECK(r.returncode == 0);
  CHECK(r.output.find("correct") != std::string::npos);
  // Its run directory is in the workspace, not the checkout's runs/.
  CHECK_FALSE(fs::is_empty(env.workspace() + "/.kforge/runs"));
}

TEST_CASE("bash_env: the rlimits hold inside the sandbox") {
  agent::BashEnv env;
  std::string err;
  REQUIRE(env.init(fresh_dir("limits"), {"KFORGE_BIN=" + kforge_bin()}, 20, &err));
  auto r = env.run("ulimit -c; ulimit -t; ulimit -f; ulimit -H -t; echo 'a b' | wc -w; exit 4");
  CHECK(r.returncode == 4);
  CHECK(
      r.output ==
      "0\n80\n1048576\n85\n2\n");  // 20 s + 60 s of CPU (SIGKILL 5 s after SIGXCPU), 1 GiB of file
  CHECK(env.run("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT").submitted);
}
