// Warm ranks (sandbox/warm.h) on the host backend, end to end: real g++ builds, real
// mpirun, the real kforge-rank in serve mode and a fresh kforge-runner per eval. Two evals
// through one set run on the same rank processes; a crash or a hang ends the set and the
// next eval is correct on a new one; and kforge killed with SIGKILL during a warm solve
// leaves no process behind.
#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>

#include "evaluate.h"
#include "kf_build_paths.h"
#include "process.h"
#include "tests/has.h"
#include "tests/kforge_child.h"
#include "tests/kforge_run.h"
#include "tests/process_root.h"
#include "tests/solve_harness.h"
#include "text.h"
#include "warm.h"

namespace fs = std::filesystem;

namespace warm_test {

using kforge_run::kRoot;
using sandbox::Job;
const std::string kRank = std::string(KF_BINARY_DIR) + "/kforge-rank";

const std::string& root() {
  static ProcessRoot r("kf-warm-test");
  return r.path;
}

// all_reduce at world 2 with n floats: a small size checked against the oracle, and
// (timed) a second one, so that a request holds two jobs as an eval's launch does.
Job size_job(int64_t n, bool timed) {
  Job j;
  j.settings.problem = "all_reduce";
  j.settings.backend = sandbox::Backend::host;
  j.settings.world = 2;
  j.settings.trials = 2;
  j.settings.calls = 3;
  j.settings.warmup = 1;
  j.settings.iters = 5;
  j.settings.verify_every = 2;
  j.settings.limits.bootstrap_s = 30;
  j.settings.limits.load_s = 20;
  j.settings.limits.setup_s = 20;
  j.settings.limits.call_s = 3;
  j.settings.limits.time_s = 30;
  j.settings.limits.total_s = 90;
  j.params = {{"n", static_cast<double>(n)}};
  sandbox::JobTensor x{"x", kf::DType::f32, false, {{n}, {n}}, {"uniform", -1, 1}, 0, 0};
  sandbox::JobTensor y{"y", kf::DType::f32, true, {{n}, {n}}, {}, 1e-5, 1e-5};
  j.tensors = {x, y};
  j.reference = sandbox::Reference::oracle;
  j.timed = timed;
  j.race = !timed;
  j.workspace_bytes = 16 << 20;
  return j;
}

struct Eval {
  sandbox::Verdict v;
  std::string dir, err;
  bool ok = false;
};

// One eval of `kernel` (a file of tests/kernels/host/ or a path) on the pool's set.
Eval eval_on(sandbox::WarmPool* pool, const std::string& kernel) {
  sandbox::EvalRequest req;
  req.candidate_path = kernel;
  req.baseline_path = kRoot + "/problems/all_reduce/baseline_host.cpp";
  req.problem_dir = kRoot + "/problems/all_reduce";
  sandbox::Instance small{"small", size_job(4099, false)}, full{"full", size_job(1024, true)};
  req.settings = small.job.settings;
  req.instances = {small, full};
  req.toolchain.backend = sandbox::Backend::host;
  req.toolchain.include_dir = kRoot + "/primitives/include";
  req.toolchain.cache_dir = root() + "/cache";
  req.launch.rank_binary = kRank;
  req.warm = pool->set_for(req);
  REQUIRE(req.warm);
  Eval e;
  e.dir = sandbox::make_eval_dir(req.warm->root());
  REQUIRE(!e.dir.empty());
  req.eval_dir = e.dir;
  e.ok = sandbox::evaluate(req, &e.v, &e.err);
  return e;
}

std::string example() {
  return kRoot + "/problems/all_reduce/examples/host.cpp";
}

std::string fault(const std::string& name) {
  return kRoot + "/tests/kernels/host/" + name + ".cpp";
}

// The warm set an eval ran on: its folder is beneath the set's root.
std::string set_root(const Eval& e) {
  return fs::path(e.dir).parent_path().string();
}

// The set's processes (mpirun, the ranks, their jail), by this machine's pids: their
// command lines name its root. (The pids the ranks report are their PID namespace's.)
std::vector<int> set_processes(const std::string& root) {
  std::vector<int> pids = sandbox::processes_naming("--serve " + root + "/ctl");
  std::sort(pids.begin(), pids.end());
  return pids;
}

bool has_note(const sandbox::Verdict& v, const std::string& part) {
  for (const auto& n : v.harness_notes)
    if (has(n, part)) return true;
  return false;
}

bool wait_for(const std::function<bool()>& done, double timeout_s) {
  for (double waited = 0; waited < timeout_s; waited += 0.1) {
    if (done()) return true;
    usleep(100000);
  }
  return done();
}

// The runners waiting under a set: kforge-runner processes whose parent is one of the
// set's (the spawner, rank/spawner.h, carries its rank's command line).
std::vector<int> runners_under(const std::string& root) {
  const std::vector<int> set = set_processes(root);
  std::vector<int> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec2;
    if (fs::read_symlink(e.path() / "exe", ec2).filename() != "kforge-runner") continue;
    std::string stat = sandbox::read_text(e.path().string() + "/stat");
    // pid (comm) state ppid ...: comm may hold spaces, so read after its last ')'.
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    int ppid = std::atoi(stat.c_str() + close + 4);
    if (std::find(set.begin(), set.end(), ppid) != set.end()) out.push_back(std::stoi(name));
  }
  return out;
}

bool has_phase(const sandbox::Verdict& v, const std::string& name) {
  for (const auto& [phase, s] : v.seconds)
    if (phase == name) return true;
  return false;
}

}  // namespace warm_test

using namespace warm_test;

TEST_CASE("warm ranks: a second eval runs on the first one's ranks, without their bootstrap" *
          doctest::timeout(300)) {
  auto pool = std::make_unique<sandbox::WarmPool>(root() + "/evals");
  Eval first = eval_on(pool.get(), example());
  REQUIRE_MESSAGE(first.ok, first.err);
  CHECK(first.v.status == sandbox::Status::correct);
  CHECK(has_note(first.v, "warm ranks: this eval started the set"));
  CHECK(has_phase(first.v, "small/context+heap"));

  // The ranks wait for the next eval, with its runners started: one a job (two) a rank
  // (two), none loaded. (The set's processes are read once they are: a runner being
  // started is, until its exec, a fork of its rank's helper and names the set.)
  auto four_spares = [&] { return runners_under(set_root(first)).size() == 4; };
  CHECK(wait_for(four_spares, 30));
  const std::vector<int> up = set_processes(set_root(first));
  CHECK(!up.empty());
  const std::vector<int> spares = runners_under(set_root(first));

  Eval second = eval_on(pool.get(), example());
  REQUIRE_MESSAGE(second.ok, second.err);
  INFO(sandbox::render_text(second.v));
  CHECK(second.v.status == sandbox::Status::correct);
  CHECK(second.v.timed);  // the second size was timed, on the same ranks
  CHECK(has_note(second.v, "warm ranks: eval 2 of the set at " + set_root(first)));
  // The same processes served both; the second skipped the bootstrap.
  CHECK(set_root(second) == set_root(first));
  CHECK(wait_for(four_spares, 30));
  CHECK(set_processes(set_root(second)) == up);
  CHECK(!has_phase(second.v, "small/context+heap"));
  CHECK(!has_phase(second.v, "small/mpi_init"));
  CHECK(has_phase(second.v, "small/warm: runners"));
  CHECK(has_phase(second.v, "warm request+reply"));
  // Each eval's folder holds its own reports; the isolation is the same as a launch's.
  CHECK(fs::exists(second.dir + "/full/result.json"));
  CHECK(has_note(second.v, "isolation: landlock"));
  // The second eval ran in the spares (each runner serves one job, then ends), and the
  // third's are up; when the pool goes, so do they.
  for (int pid : runners_under(set_root(first)))
    CHECK(std::find(spares.begin(), spares.end(), pid) == spares.end());
  pool.reset();
  CHECK(wait_for(
      [&] {
        return runners_under(set_root(first)).empty() && set_processes(set_root(first)).empty();
      },
      30));
}

TEST_CASE("warm ranks: a crash or a hang ends the set, and the next eval is correct on a new one" *
          doctest::timeout(300)) {
  sandbox::WarmPool pool(root() + "/evals");
  Eval good = eval_on(&pool, example());
  REQUIRE_MESSAGE(good.ok, good.err);
  CHECK(good.v.status == sandbox::Status::correct);
  for (const char* name : {"segfault", "spin"}) {
    CAPTURE(name);
    const std::string old_root = set_root(good);
    Eval bad = eval_on(&pool, fault(name));
    REQUIRE_MESSAGE(bad.ok, bad.err);
    CHECK(bad.v.status ==
          (std::string(name) == "spin" ? sandbox::Status::timeout : sandbox::Status::crash));
    CHECK(has_note(bad.v, "warm ranks: eval 2 of the set"));  // it ran on the warm ranks
    // Nothing of the old set is left.
    CHECK(sandbox::wait_none_naming(old_root + "/", 20));
    good = eval_on(&pool, example());
    REQUIRE_MESSAGE(good.ok, good.err);
    INFO(sandbox::render_text(good.v));
    CHECK(good.v.status == sandbox::Status::correct);
    CHECK(has_note(good.v, "warm ranks: this eval started the set"));
    CHECK(set_root(good) != old_root);
    CHECK(!set_processes(set_root(good)).empty());
  }
}

namespace warm_test {

// Runs kforge (solve or tune) on all_reduce, waits for `ready` (given the harness's warm
// folder), kills it with SIGKILL and checks that nothing it started is left.
void kill_during(const std::vector<std::string>& words, const std::string& isolation,
                 const std::function<bool(const std::string&)>& ready) {
  CAPTURE(words[0]);
  CAPTURE(isolation);
  solve_test::Harness h;
  h.extra_env.push_back("KFORGE_ISOLATION=" + isolation);
  std::vector<std::string> argv = {std::string(KF_BINARY_DIR) + "/kforge"};
  argv.insert(argv.end(), words.begin(), words.end());
  argv.insert(argv.end(), {"--backend", "host", "--world", "2", "--size", "small"});
  kforge_child::Child kforge;
  std::string err;
  REQUIRE_MESSAGE(kforge.start(argv, h.env(), h.dir() + "/kforge.out", &err), err);
  const std::string warm = h.dir() + "/runs/evals/warm";
  REQUIRE(kforge.wait_until([&] { return ready(warm); }, 120));
  double seconds = 0;
  kforge.signal_and_wait(SIGKILL, 10, &seconds);
  // No handler of kforge's runs: kforge-confine's PDEATHSIG (confined), or the ranks
  // finding their FIFOs without a writer (KFORGE_ISOLATION=none), ends the set.
  CHECK(sandbox::wait_none_naming(warm, 30));
  CHECK(kforge_child::processes_naming(h.dir()).empty());
}

// A warm set's ranks are up (their command line names the warm folder).
bool ranks_up(const std::string& warm) {
  return !sandbox::processes_naming("--serve " + warm).empty();
}

// ... and have served an eval: they wait for the next one, or run it.
bool served_one(const std::string& warm) {
  std::error_code ec;
  if (!ranks_up(warm)) return false;
  for (auto& e : fs::recursive_directory_iterator(warm, ec))
    if (e.path().filename() == "served.json") return true;
  return false;
}

}  // namespace warm_test

TEST_CASE("warm ranks: kforge killed with SIGKILL during a warm solve or tune leaves no process" *
          doctest::timeout(600)) {
  for (const char* isolation : {"", "none"}) {
    // The builtin's solve on the host backend ends at its first correct candidate: it is
    // killed while that eval runs on the set. tune evaluates several: killed once its set
    // has served one.
    kill_during({"solve", "all_reduce", "--headless"}, isolation, ranks_up);
    kill_during({"tune", "all_reduce", "--budget", "8"}, isolation, served_one);
  }
}
