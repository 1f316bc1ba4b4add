// tests/new_problem_test.cpp: a problem is its folder. `kforge new-problem` copies a
// problem under a new name into a scratch problems path (KFORGE_PROBLEMS), and the kforge
// already built evaluates its example to correct on the host backend: its oracle and
// baseline are built from the folder on first use, and neither kforge nor kforge-rank
// changes (their bytes and mtimes are checked). The oracle really is the folder's: a
// changed oracle.cpp changes the verdict, a broken one is named with what to do.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kf_build_paths.h"
#include "sandbox/sha256.h"
#include "sandbox/text.h"
#include "tests/kforge_run.h"

namespace {

namespace fs = std::filesystem;
using kforge_run::kforge;
using kforge_run::Run;
using kforge_run::status_of;

std::string read_all(const std::string& path) {
  return sandbox::read_text(path);
}

// What must not change: the binary's bytes and its modification time.
struct Stamp {
  std::string hash;
  fs::file_time_type mtime;
  explicit Stamp(const std::string& path)
      : hash(sandbox::sha256_hex(read_all(path))), mtime(fs::last_write_time(path)) {}
  bool operator==(const Stamp& o) const { return hash == o.hash && mtime == o.mtime; }
};

struct Scratch {
  std::string root, problems, env;
  Scratch() {
    char tmpl[] = "/tmp/kf-new-problem-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    root = tmpl;
    problems = root + "/problems";
    fs::create_directories(problems);
    env = "KFORGE_PROBLEMS=" + problems + " KFORGE_CACHE=" + root + "/cache KFORGE_RUNS=" + root +
          "/runs";
  }
  ~Scratch() { fs::remove_all(root); }
};

std::string host_eval(const std::string& problem) {
  return "eval " + problem + " --backend host --world 2 --size small --no-time --json";
}

}  // namespace

TEST_CASE("new-problem: a copied folder evaluates correct with the built kforge, unrebuilt") {
  const Stamp kforge_before(KF_BINARY_DIR "/kforge");
  const Stamp rank_before(KF_BINARY_DIR "/kforge-rank");
  Scratch s;
  Run made = kforge("new-problem my_sum --from all_reduce", s.env);
  REQUIRE_MESSAGE(made.code == 0, made.out);
  const std::string dir = s.problems + "/my_sum";
  CHECK(made.out.find("made " + dir) != std::string::npos);
  CHECK(made.out.find("oracle.cpp") != std::string::npos);
  CHECK(fs::exists(dir + "/oracle.cpp"));
  CHECK(fs::exists(dir + "/bugs/wrong_host.patch"));
  CHECK_FALSE(fs::exists(dir + "/oracle_test.cpp"));  // it tests all_reduce, by name
  const std::string spec = read_all(dir + "/problem.json");
  CHECK(spec.find("\"name\": \"my_sum\"") != std::string::npos);
  CHECK(spec.find("\"mirrors\"") == std::string::npos);

  Run listed = kforge("problems", s.env);
  CHECK_MESSAGE(listed.out.find("my_sum") != std::string::npos, listed.out);
  Run ok = kforge(host_eval("my_sum"), s.env);
  CHECK_MESSAGE(status_of(ok) == "correct", ok.out);

  // The folder's oracle, not one of kforge's: y off by one on rank 0, which the baseline
  // (checked against the oracle before any candidate) contradicts, naming the output.
  std::string oracle = read_all(dir + "/oracle.cpp");
  const std::string sum = "y[i] += x[i];";
  REQUIRE(oracle.find(sum) != std::string::npos);
  oracle.replace(oracle.find(sum), sum.size(), "y[i] += x[i] + (r == 0 ? 1 : 0);");
  std::ofstream(dir + "/oracle.cpp") << oracle;
  Run off = kforge(host_eval("my_sum"), s.env);
  CHECK(off.code != 0);
  CHECK_MESSAGE(
      off.out.find("the baseline disagrees with the oracle: output 'y'") != std::string::npos,
      off.out);

  std::ofstream(dir + "/oracle.cpp") << "#include \"kf/oracle.h\"\nKF_ORACLE(my_sum) { oops }\n";
  Run broken = kforge(host_eval("my_sum"), s.env);
  CHECK(broken.code != 0);
  CHECK_MESSAGE(broken.out.find(dir + "/oracle.cpp does not build") != std::string::npos,
                broken.out);
  CHECK_MESSAGE(broken.out.find("fix the file") != std::string::npos, broken.out);

  CHECK(Stamp(KF_BINARY_DIR "/kforge") == kforge_before);
  CHECK(Stamp(KF_BINARY_DIR "/kforge-rank") == rank_before);
}

TEST_CASE("new-problem: a bad name, a taken one or an unknown template is refused") {
  Scratch s;
  Run bad = kforge("new-problem 9lives", s.env);
  CHECK(bad.code == 2);
  CHECK(bad.out.find("'9lives' is not a problem name") != std::string::npos);
  Run unknown = kforge("new-problem fine --from no_such_problem", s.env);
  CHECK(unknown.code == 2);
  CHECK(unknown.out.find("--from no_such_problem: no problem folder") != std::string::npos);
  REQUIRE(kforge("new-problem taken", s.env).code == 0);
  Run again = kforge("new-problem taken", s.env);
  CHECK(again.code == 2);
  CHECK(again.out.find(s.problems + "/taken exists") != std::string::npos);
  CHECK_FALSE(fs::exists(s.problems + "/fine"));
}

TEST_CASE("new-problem: without a search.json the builtin says it cannot write it, no failure") {
  Scratch s;
  REQUIRE(kforge("new-problem mine", s.env).code == 0);
  fs::remove(s.problems + "/mine/search.json");  // a person's problem, no template space yet
  Run tune = kforge("tune mine --backend host --world 2", s.env);
  CHECK(tune.code == 2);
  CHECK_MESSAGE(tune.out.find("problem mine is not supported by the builtin") != std::string::npos,
                tune.out);
  const std::string out = s.root + "/sweep";
  Run sweep = kforge(
      "sweep mine --model builtin --samples 2 --max-turns 1 --backend host "
      "--world 2 --out " +
          out,
      s.env);
  CHECK_MESSAGE(sweep.code == 0, sweep.out);
  Run st = kforge("sweep status " + out, s.env);
  CHECK_MESSAGE(st.out.find("2 not runnable") != std::string::npos, st.out);
  CHECK_MESSAGE(st.out.find("mine is not supported by the builtin") != std::string::npos, st.out);
  CHECK_MESSAGE(st.out.find("failed") == std::string::npos, st.out);
}
