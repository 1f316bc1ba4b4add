// tests/faults_test.cpp: the fault suite. Every candidate in tests/faults/ names, in its
// first line, the problem, the worlds, the verdict it must get and any extra arguments:
//   // fault: all_reduce world=2,4 expect=unstable [timed] [args=--call-limit,3] [env=K=V,...]
//   //        [says=WORDS]
// (env: added to kforge's environment for that case; says: text the verdict's JSON must
// hold, '_' for a space). A case is one file at one world.
// Each runs through the real kforge on the host backend; after each, no rank process may
// be left and an honest kernel's eval must be correct. Adding a case is adding a file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "kf_build_paths.h"
#include "sandbox/process.h"
#include "tests/kforge_child.h"
#include "tests/kforge_run.h"
#include "tests/solve_harness.h"

namespace {

using solve_test::Harness;
using solve_test::json;
namespace fs = std::filesystem;

const std::string kFaults = std::string(KF_SOURCE_ROOT) + "/tests/faults";

struct Fault {
  std::string name, problem, expect;
  std::vector<int> worlds;
  bool timed = false;
  std::vector<std::string> args;
  std::vector<std::string> env;
  std::string says;
  std::string source;  // with common.h pasted in: a candidate is one file
};

// A candidate is one file: each #include "NAME" of a header beside the cases (and of
// "inputs.h", the public input generator) is replaced by its text, once, recursively.
std::string paste_includes(std::string text) {
  std::set<std::string> done;
  for (size_t at; (at = text.find("#include \"")) != std::string::npos;) {
    size_t end = text.find('"', at + 10);
    const std::string name = text.substr(at + 10, end - at - 10);
    const std::string path = name == "inputs.h" ? std::string(KF_SOURCE_ROOT) + "/sandbox/inputs.h"
                                                : kFaults + "/" + name;
    // Pasted once; a header found nowhere here (inputs.h's "kf/abi.h", which <kf/kf.h>
    // brings) is dropped.
    std::string body =
        done.insert(name).second && fs::exists(path) ? solve_test::read_file(path) : "";
    text.replace(at, end + 1 - at, body);
  }
  return text;
}

bool parse_fault(const fs::path& p, Fault* f, std::string* err) {
  std::string text = solve_test::read_file(p.string());
  std::istringstream first(text.substr(0, text.find('\n')));
  std::string word;
  first >> word >> word;
  if (word != "fault:") {
    *err = p.string() + ": the first line must be '// fault: PROBLEM world=N expect=STATUS ...'";
    return false;
  }
  f->name = p.stem().string();
  first >> f->problem;
  while (first >> word) {
    if (word.rfind("world=", 0) == 0) {
      std::istringstream list(word.substr(6));
      for (std::string w; std::getline(list, w, ',');) f->worlds.push_back(std::stoi(w));
    } else if (word.rfind("expect=", 0) == 0)
      f->expect = word.substr(7);
    else if (word == "timed")
      f->timed = true;
    else if (word.rfind("args=", 0) == 0) {
      std::istringstream list(word.substr(5));
      for (std::string a; std::getline(list, a, ',');) f->args.push_back(a);
    } else if (word.rfind("says=", 0) == 0) {
      f->says = word.substr(5);
      std::replace(f->says.begin(), f->says.end(), '_', ' ');
    } else if (word.rfind("env=", 0) == 0) {
      std::istringstream list(word.substr(4));
      for (std::string a; std::getline(list, a, ',');) f->env.push_back(a);
    }
  }
  f->source = paste_includes(text);
  if (f->expect.empty() || f->worlds.empty())
    *err = p.string() + ": no world=N[,N...] or expect=STATUS on its first line";
  return !f->expect.empty() && !f->worlds.empty();
}

// Every case, or those named in KF_FAULTS (space-separated: a developer's shortcut).
std::vector<Fault> all_faults() {
  std::vector<Fault> out;
  const char* only = std::getenv("KF_FAULTS");
  for (auto& e : fs::directory_iterator(kFaults)) {
    if (e.path().extension() != ".cpp") continue;
    if (only && *only &&
        (" " + std::string(only) + " ").find(" " + e.path().stem().string() + " ") ==
            std::string::npos)
      continue;
    Fault f;
    std::string err;
    REQUIRE_MESSAGE(parse_fault(e.path(), &f, &err), err);
    out.push_back(f);
  }
  std::sort(out.begin(), out.end(), [](const Fault& a, const Fault& b) { return a.name < b.name; });
  return out;
}

// `kforge eval` of `source` on the host backend; the verdict's JSON (empty on no JSON).
json eval_case(Harness& h, const std::string& problem, const std::string& source, int world,
               bool timed, const std::vector<std::string>& extra, std::string* output) {
  std::string file = h.dir() + "/cand.cpp";
  std::ofstream(file) << source;
  std::vector<std::string> args = {
      "eval",   problem, file,    "--backend", "host", "--world", std::to_string(world),
      "--size", "small", "--json"};
  if (!timed) args.push_back("--no-time");
  args.insert(args.end(), extra.begin(), extra.end());
  h.kforge(args, output);
  size_t brace = output->find('{');
  return brace == std::string::npos ? json() : json::parse(output->substr(brace), nullptr, false);
}

// The kernel evaluated after each case: all_reduce's shipped host example.
std::string honest_kernel() {
  return solve_test::read_file(std::string(KF_SOURCE_ROOT) +
                               "/problems/all_reduce/examples/host.cpp");
}

// Every line of every file named `name` under the harness's runs.
std::vector<std::string> run_lines(Harness& h, const std::string& name) {
  std::vector<std::string> lines;
  std::error_code ec;
  for (auto& p : fs::recursive_directory_iterator(h.dir() + "/runs", ec))
    if (p.path().filename() == name) {
      std::istringstream in(solve_test::read_file(p.path().string()));
      for (std::string l; std::getline(in, l);) lines.push_back(l);
    }
  return lines;
}

}  // namespace

TEST_CASE(
    "faults: every case in tests/faults gets its verdict, leaves nothing, and the next eval is "
    "correct" *
    doctest::timeout(1800)) {
  Harness h;
  const std::string honest = honest_kernel();
  std::vector<Fault> faults = all_faults();
  size_t cases = 0;
  for (const Fault& f : faults) cases += f.worlds.size();
  MESSAGE("fault suite: " << cases << " cases from " << faults.size() << " files");
  if (!std::getenv("KF_FAULTS")) CHECK(cases >= 30);
  for (const Fault& f : faults)
    for (int world : f.worlds) {
      CAPTURE(f.name);
      CAPTURE(world);
      std::string out;
      h.extra_env = f.env;
      json v = eval_case(h, f.problem, f.source, world, f.timed, f.args, &out);
      h.extra_env.clear();
      INFO(out);
      CHECK(kforge_run::status_of(out) == f.expect);
      if (!f.says.empty()) CHECK_MESSAGE(v.dump().find(f.says) != std::string::npos, f.says);
      // No process of this eval (rank, mpirun, bwrap, supervisor: all name its folder).
      CHECK(sandbox::wait_none_naming(h.dir(), 15));
      if (f.name == "remembers_outputs") {
        // No call, checked or timed, saw inputs a call before it had seen.
        std::vector<std::string> seen = run_lines(h, "inputs.log");
        CHECK(seen.size() > 20);
        for (const std::string& l : seen) CHECK_MESSAGE(l.find("repeat") == std::string::npos, l);
      }
      fs::remove_all(h.dir() + "/runs");
      eval_case(h, "all_reduce", honest, world, false, {}, &out);
      CHECK_MESSAGE(kforge_run::status_of(out) == "correct", "the eval after " << f.name);
      fs::remove_all(h.dir() + "/runs");
    }
}

// The knob the settings block was proven with (issue 32): the race pass is what catches a
// kernel that returns before its peers are done reading; without it, that kernel passes,
// and the verdict says the check was weaker.
TEST_CASE("faults: --no-race-pass lets no_exit_wait pass, and the verdict says it was skipped" *
          doctest::timeout(600)) {
  Harness h;
  Fault f;
  std::string err, out;
  REQUIRE_MESSAGE(parse_fault(kFaults + "/no_exit_wait.cpp", &f, &err), err);
  json v = eval_case(h, f.problem, f.source, 2, false, {"--no-race-pass"}, &out);
  INFO(out);
  CHECK(kforge_run::status_of(out) == "correct");
  CHECK(v.dump().find("race pass: skipped (--no-race-pass)") != std::string::npos);
  CHECK(sandbox::wait_none_naming(h.dir(), 15));
}

namespace {

// The warm-ranks note of a verdict's JSON: "reused" (a set that was up), "started" (a
// new set), "" (none).
std::string warm_use(const json& v) {
  std::string notes;
  for (const auto& n : v.value("harness_notes", json::array())) notes += n.get<std::string>();
  if (notes.find("warm ranks: eval ") != std::string::npos) return "reused";
  if (notes.find("warm ranks: this eval started the set") != std::string::npos) return "started";
  return "";
}

}  // namespace

// The same cases through warm ranks (issue 34): a `kforge serve` for the whole suite, every
// eval sent to it (KFORGE_SERVE). Each case gets its verdict on the server's set; the next
// eval is correct, on warm ranks: the same set after any verdict but a crash or a hang;
// kill -9 of the server leaves nothing. Cases that set kforge's environment
// (env=) are left out: a server launches with its own.
TEST_CASE(
    "faults: every case through kforge serve's warm ranks, and the next eval on them "
    "correct" *
    doctest::timeout(1800)) {
  Harness h;
  const std::string honest = honest_kernel();
  const std::string socket = h.dir() + "/serve.sock";
  kforge_child::Child server;
  std::string err;
  REQUIRE_MESSAGE(
      server.start({std::string(KF_BINARY_DIR) + "/kforge", "serve", "--socket", socket}, h.env(),
                   h.dir() + "/serve.out", &err),
      err);
  REQUIRE(server.wait_until([&] { return fs::is_socket(socket); }, 30));
  for (const Fault& f : all_faults()) {
    if (!f.env.empty()) continue;
    for (int world : f.worlds) {
      CAPTURE(f.name);
      CAPTURE(world);
      std::string out;
      h.extra_env = {"KFORGE_SERVE=" + socket};
      json v = eval_case(h, f.problem, f.source, world, f.timed, f.args, &out);
      INFO(out);
      CHECK(kforge_run::status_of(out) == f.expect);
      // It ran on the server's warm ranks, unless it never reached ranks.
      const bool ranks =
          f.expect != "compile_error" && f.expect != "rejected" && f.expect != "load_error";
      if (ranks) CHECK(!warm_use(v).empty());
      if (!f.says.empty()) CHECK_MESSAGE(v.dump().find(f.says) != std::string::npos, f.says);
      json next = eval_case(h, "all_reduce", honest, world, false, {}, &out);
      CHECK_MESSAGE(kforge_run::status_of(out) == "correct", "the eval after " << f.name);
      CHECK(!warm_use(next).empty());
      // A verdict that is not a crash or a hang leaves the set to the next eval of the same
      // problem, world and settings. (A crash or a hang may end it: a rank's death does, a
      // kf_run that returns an error does not.)
      const bool same_set = f.problem == "all_reduce" && f.args.empty() && !f.timed;
      if (ranks && same_set && f.expect != "crash" && f.expect != "timeout")
        CHECK(warm_use(next) == "reused");
    }
  }
  h.extra_env.clear();
  double seconds = 0;
  server.signal_and_wait(SIGKILL, 10, &seconds);
  CHECK(sandbox::wait_none_naming(h.dir(), 30));
}
