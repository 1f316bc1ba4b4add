// End-to-end runs of the executor on the host backend: real g++ builds, real mpirun,
// the real kforge-rank, and the fault kernels of tests/kernels/host/. Each case is one
// evaluation (about a second of mpirun); the compile cache is shared by the whole file.
#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "evaluate.h"
#include "kf_build_paths.h"
#include "launch.h"
#include "process.h"
#include "rank_process.h"
#include "tests/has.h"
#include "tests/kforge_run.h"
#include "tests/process_root.h"

using namespace sandbox;
namespace fs = std::filesystem;

namespace {

using kforge_run::kRoot;
const std::string kRank = std::string(KF_BINARY_DIR) + "/kforge-rank";

const std::string& test_root() {
  static ProcessRoot r("kf-executor-test");
  return r.path;
}

bool have_rank() {
  if (fs::exists(kRank)) return true;
  MESSAGE("skipped: " << kRank << " is not built (build the kforge-rank target)");
  return false;
}

JobTensor tensor(const std::string& name, bool output, std::vector<int64_t> shape, int world,
                 double tol = 0) {
  JobTensor t;
  t.name = name;
  t.dtype = kf::DType::f32;
  t.output = output;
  t.shape_by_rank.assign(world, shape);
  if (!output) t.init = InitSpec{"uniform", -1, 1};
  t.atol = t.rtol = tol;
  return t;
}

Job base_job(const std::string& problem, int world, int64_t n) {
  Job j;
  j.settings.problem = problem;
  j.settings.backend = sandbox::Backend::host;
  j.settings.world = world;
  j.params = {{"n", static_cast<double>(n)}};
  if (problem == "all_reduce")
    j.tensors = {tensor("x", false, {n}, world), tensor("y", true, {n}, world, 1e-5)};
  else  // all_gather
    j.tensors = {tensor("x", false, {n}, world), tensor("y", true, {world * n}, world, 0)};
  j.reference = sandbox::Reference::oracle;
  j.settings.trials = 2;
  j.settings.calls = 3;
  j.timed = false;
  j.workspace_bytes = 16 << 20;
  j.settings.limits.bootstrap_s = 30;
  j.settings.limits.load_s = 20;
  j.settings.limits.setup_s = 20;
  j.settings.limits.call_s = 3;
  j.settings.limits.time_s = 30;
  j.settings.limits.total_s = 90;
  return j;
}

struct EvalRun {
  Verdict v;
  std::string eval_dir;
  std::string err;
  bool ok = false;
};

// `beside`, when given, runs on a thread of its own during the evaluation, given its
// directory.
EvalRun eval_kernel(const std::string& problem, const std::string& candidate, int world = 2,
                    Job job = Job{}, bool timed = false,
                    std::function<void(const std::string&)> beside = {}) {
  EvalRun r;
  EvalRequest req;
  req.candidate_path = candidate;
  req.baseline_path = kRoot + "/problems/" + problem + "/baseline_host.cpp";
  req.problem_dir = kRoot + "/problems/" + problem;
  Instance inst;
  inst.label = "small";
  inst.job = job.settings.problem.empty() ? base_job(problem, world, 4099) : job;
  if (timed) {
    inst.job.timed = true;
    inst.job.settings.warmup = 1;
    inst.job.settings.iters = 5;
    inst.job.settings.verify_every = 2;
  }
  // The job's settings are the request's: evaluate writes them into every job.json.
  req.settings = inst.job.settings;
  req.settings.world = world;
  req.instances = {inst};
  req.toolchain.backend = sandbox::Backend::host;
  req.toolchain.include_dir = kRoot + "/primitives/include";
  req.toolchain.cache_dir = test_root() + "/cache";
  req.toolchain.allow_multicast = false;
  req.launch.rank_binary = kRank;
  r.eval_dir = make_eval_dir(test_root() + "/evals");
  REQUIRE(!r.eval_dir.empty());
  req.eval_dir = r.eval_dir;
  std::thread side;
  if (beside) side = std::thread(beside, r.eval_dir);
  r.ok = evaluate(req, &r.v, &r.err);
  if (side.joinable()) side.join();
  if (getenv("KF_SHOW_VERDICTS"))
    MESSAGE(fs::path(candidate).filename().string() << ": " << render_text(r.v));
  return r;
}

std::string kernel(const std::string& name) {
  return kRoot + "/tests/kernels/host/" + name + ".cpp";
}

std::string write_temp_file(const std::string& name, const std::string& text) {
  std::string dir = test_root() + "/src";
  fs::create_directories(dir);
  std::string p = dir + "/" + name;
  std::ofstream(p) << text;
  return p;
}

// Every rank reported, and no process that names the run directory is left.
void check_no_rank_left(const std::string& run_dir, int world) {
  for (int r = 0; r < world; ++r) CHECK(read_rank_status(run_dir, r).present);
  CHECK(wait_none_naming(run_dir, 5));
}

#define REQUIRE_EVAL(run)                    \
  do {                                       \
    INFO("err: " << run.err);                \
    INFO("verdict: " << render_text(run.v)); \
    REQUIRE(run.ok);                         \
  } while (0)

}  // namespace

TEST_CASE("executor: the example all_reduce is correct, world 2 and world 4" *
          doctest::timeout(300)) {
  if (!have_rank()) return;
  std::string cand = kRoot + "/problems/all_reduce/examples/host.cpp";
  EvalRun r = eval_kernel("all_reduce", cand, 2, Job{}, true);
  REQUIRE_EVAL(r);
  INFO(render_text(r.v));
  CHECK(r.v.status == sandbox::Status::correct);
  CHECK(r.v.timed);
  CHECK(r.v.speedup == 0);  // host times are no speed measurement
  CHECK(has(r.v.summary, "not a speed measurement"));
  CHECK(fs::exists(r.eval_dir + "/verdict.json"));
  check_no_rank_left(r.eval_dir + "/small", 2);

  EvalRun r4 = eval_kernel("all_reduce", cand, 4);
  REQUIRE_EVAL(r4);
  INFO(render_text(r4.v));
  CHECK(r4.v.status == sandbox::Status::correct);
  CHECK(r4.v.world == 4);
}

TEST_CASE("executor: wrong_rank is a mismatch naming the rank and indices" *
          doctest::timeout(300)) {
  if (!have_rank()) return;
  EvalRun r = eval_kernel("all_reduce", kernel("wrong_rank"));
  REQUIRE_EVAL(r);
  INFO(render_text(r.v));
  CHECK(r.v.status == sandbox::Status::mismatch);
  REQUIRE(!r.v.failures.empty());
  CHECK(r.v.failures[0].tensor == "y");
  CHECK(!r.v.failures[0].first_bad.empty());
  CHECK(has(r.v.summary, "rank "));
  CHECK(has(r.v.summary, "tensor y"));
  CHECK(has(r.v.summary, "y[0]"));
}

TEST_CASE("executor: spin is a timeout naming the ranks, and no rank is left" *
          doctest::timeout(300)) {
  if (!have_rank()) return;
  EvalRun r = eval_kernel("all_reduce", kernel("spin"));
  REQUIRE_EVAL(r);
  INFO(render_text(r.v));
  CHECK(r.v.status == sandbox::Status::timeout);
  REQUIRE(!r.v.stuck.empty());
  for (auto& s : r.v.stuck) {
    CHECK(s.in_candidate);
    CHECK(s.seconds >= 3);
  }
  CHECK(r.v.limit_s == 3);  // the call limit fired, not the job's total
  CHECK(has(r.v.summary, "stuck in"));
  double run_s = 0;
  for (auto& [k, s] : r.v.seconds)
    if (has(k, "small")) run_s = s;
  CHECK(run_s < 90);
  check_no_rank_left(r.eval_dir + "/small", 2);
}

TEST_CASE("executor: segfault is a crash with signal 11 and the rank" * doctest::timeout(300)) {
  if (!have_rank()) return;
  EvalRun r = eval_kernel("all_reduce", kernel("segfault"));
  REQUIRE_EVAL(r);
  INFO(render_text(r.v));
  CHECK(r.v.status == sandbox::Status::crash);
  REQUIRE(!r.v.crashes.empty());
  CHECK(has(r.v.crashes[0].what, "signal 11"));
  CHECK(has(r.v.crashes[0].what, "SIGSEGV"));
  CHECK(has(r.v.summary, "rank " + std::to_string(r.v.crashes[0].rank)));
  check_no_rank_left(r.eval_dir + "/small", 2);
}

TEST_CASE("executor: a null store written here is a crash with SIGSEGV" * doctest::timeout(300)) {
  if (!have_rank()) return;
  // The address comes through a volatile, so the compiler must emit a real store to 0.
  std::string src =
      write_temp_file("null_store.cpp",
                      "#include <cstdint>\n#include <kf/kf.h>\n"
                      "extern \"C\" int kf_run(kf::Comm& comm, kf::Tensors&) {\n"
                      "  volatile uintptr_t addr = 0;\n"
                      "  if (comm.rank == 1) *reinterpret_cast<volatile int*>(addr) = 42;\n"
                      "  return 0;\n}\n");
  EvalRun r = eval_kernel("all_reduce", src);
  REQUIRE_EVAL(r);
  INFO(render_text(r.v));
  CHECK(r.v.status == sandbox::Status::crash);
  REQUIRE(!r.v.crashes.empty());
  CHECK(r.v.crashes[0].rank == 1);
  CHECK(has(r.v.crashes[0].what, "signal 11 (SIGSEGV)"));
  CHECK(has(r.v.summary, "crash: rank 1 died with signal 11 (SIGSEGV) in check"));
  check_no_rank_left(r.eval_dir + "/small", 2);
}

TEST_CASE("executor: stale_flag on all_gather is unstable" * doctest::timeout(300)) {
  if (!have_rank()) return;
  Job job = base_job("all_gather", 2, 4099);
  job.settings.stagger_ms = 50;
  EvalRun r = eval_kernel("all_gather", kernel("stale_flag"), 2, job);
  REQUIRE_EVAL(r);
  INFO(render_text(r.v));
  CHECK(r.v.status == sandbox::Status::unstable);
}

TEST_CASE("executor: writes_input is a mismatch with input_modified" * doctest::timeout(300)) {
  if (!have_rank()) return;
  EvalRun r = eval_kernel("all_reduce", kernel("writes_input"));
  REQUIRE_EVAL(r);
  INFO(render_text(r.v));
  CHECK(r.v.status == sandbox::Status::mismatch);
  bool input = false;
  for (auto& f : r.v.failures) input = input || (f.input_modified && f.tensor == "x");
  CHECK(input);
}

TEST_CASE("executor: setup_fail and bad_alloc_order are setup errors" * doctest::timeout(300)) {
  if (!have_rank()) return;
  EvalRun r = eval_kernel("all_reduce", kernel("setup_fail"));
  REQUIRE_EVAL(r);
  INFO(render_text(r.v));
  CHECK(r.v.status == sandbox::Status::setup_error);
  CHECK(has(r.v.summary, "3"));

  EvalRun b = eval_kernel("all_reduce", kernel("bad_alloc_order"));
  REQUIRE_EVAL(b);
  INFO(render_text(b.v));
  CHECK(b.v.status == sandbox::Status::setup_error);
  CHECK(has(b.v.summary, "comm.alloc"));
}

TEST_CASE("executor: missing_symbol is a load_error" * doctest::timeout(300)) {
  if (!have_rank()) return;
  EvalRun r = eval_kernel("all_reduce", kernel("missing_symbol"));
  REQUIRE_EVAL(r);
  INFO(render_text(r.v));
  CHECK(r.v.status == sandbox::Status::load_error);
  CHECK(has(r.v.summary, "kf_run"));
}

TEST_CASE("executor: env_probe is correct and sees a scrubbed environment" *
          doctest::timeout(300)) {
  if (!have_rank()) return;
  setenv("OPENAI_API_KEY", "sk-test-planted", 1);
  EvalRun r = eval_kernel("all_reduce", kernel("env_probe"));
  unsetenv("OPENAI_API_KEY");
  REQUIRE_EVAL(r);
  INFO(render_text(r.v));
  CHECK(r.v.status == sandbox::Status::correct);
  std::string scratch = r.eval_dir + "/small/scratch";
  std::ifstream in(scratch + "/env.txt");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string env = ss.str();
  CHECK(!has(env, "OPENAI_API_KEY"));
  CHECK(!has(env, "sk-test-planted"));
  CHECK(has(env, "HOME=" + scratch + "\n"));
  CHECK(has(env, "TMPDIR=" + scratch + "\n"));
  CHECK(has(env, "NCCL_NVLS_ENABLE=0"));
}

TEST_CASE("executor: a banned call is rejected and a syntax error is a compile_error" *
          doctest::timeout(300)) {
  if (!have_rank()) return;
  std::string bad = write_temp_file("uses_mpi.cpp",
                                    "#include <kf/kf.h>\n"
                                    "extern \"C\" int kf_run(kf::Comm&, kf::Tensors&) {\n"
                                    "  return MPI_Barrier(0);\n"
                                    "}\n");
  EvalRun r = eval_kernel("all_reduce", bad);
  REQUIRE_EVAL(r);
  CHECK(r.v.status == sandbox::Status::rejected);
  CHECK(has(r.v.summary, "uses_mpi.cpp:3: uses MPI_Barrier"));
  // The ranks started beside the build and went home at its gate: nothing was loaded.
  CHECK(!fs::exists(r.eval_dir + "/small/rank0.json"));
  CHECK(read_rank_status(r.eval_dir + "/small", 0).phase == sandbox::RankPhase::done);

  std::string broken = write_temp_file("broken.cpp",
                                       "#include <kf/kf.h>\n"
                                       "extern \"C\" int kf_run(kf::Comm&, kf::Tensors&) {\n"
                                       "  return not_declared_anywhere;\n"
                                       "}\n");
  EvalRun c = eval_kernel("all_reduce", broken);
  REQUIRE_EVAL(c);
  CHECK(c.v.status == sandbox::Status::compile_error);
  CHECK(has(c.v.summary, "broken.cpp:3"));
  CHECK(has(c.v.log, "not_declared_anywhere"));
}

TEST_CASE("executor: a rank killed from outside is a crash told by its exit record" *
          doctest::timeout(300)) {
  if (!have_rank()) return;
  // What the OOM killer or a stray kill -9 would do, once rank 1 is inside the candidate's
  // call (which spins; the call limit is 3 s).
  auto kill_rank1 = [](const std::string& eval_dir) {
    for (int i = 0; i < 600; ++i) {
      RankStatus s = read_rank_status(eval_dir + "/small", 1);
      int pid = s.present && s.in_candidate && s.phase == sandbox::RankPhase::check
                    ? rank_process(eval_dir, 1)
                    : 0;
      if (pid > 0) {
        kill(pid, SIGKILL);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  EvalRun r = eval_kernel("all_reduce", kernel("spin"), 2, Job{}, false, kill_rank1);
  REQUIRE_EVAL(r);
  INFO(render_text(r.v));
  CHECK(r.v.status == sandbox::Status::crash);
  REQUIRE(!r.v.crashes.empty());
  // The first to end is the cause; the others were ended by mpirun after it.
  CHECK(r.v.crashes[0].rank == 1);
  CHECK(has(r.v.crashes[0].what, "signal 9 (SIGKILL) without a report"));
  CHECK(has(r.v.crashes[0].what, "last in check"));
  CHECK(fs::exists(r.eval_dir + "/small/status/rank1.exit"));
  check_no_rank_left(r.eval_dir + "/small", 2);
}
