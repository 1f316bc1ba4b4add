#include "launch.h"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "kf_build_paths.h"
#include "process.h"

using namespace sandbox;
namespace fs = std::filesystem;

namespace {

std::string launch_temp_dir() {
  char tmpl[] = "/tmp/kf-launch-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

bool has_entry(const std::vector<std::string>& env, const std::string& prefix) {
  return std::any_of(env.begin(), env.end(), [&](auto& e) { return e.rfind(prefix, 0) == 0; });
}

// A stand-in for kforge-rank: a shell script that behaves as `body` says. Named
// kforge-rank so that the watchdog recognizes its processes.
std::string fake_rank(const std::string& dir, const std::string& body) {
  std::string path = dir + "/bin/kforge-rank";
  fs::create_directories(dir + "/bin");
  std::ofstream(path)
      << "#!/bin/sh\n"
         "dir=$(dirname \"$1\"); r=$OMPI_COMM_WORLD_RANK\n"
         "status() { ms=$(($(date +%s%N)/1000000));"
         " echo \"{\\\"pid\\\":$$,\\\"phase\\\":\\\"$1\\\",\\\"detail\\\":\\\"$2\\\","
         "\\\"in_candidate\\\":$3,\\\"since_ms\\\":$ms,\\\"limit_s\\\":$4}\""
         " > $dir/status/rank$r.tmp; mv $dir/status/rank$r.tmp $dir/status/rank$r; }\n"
      << body << "\n";
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

Job small_job(const std::string& dir, int world) {
  Job j;
  j.settings.problem = "all_reduce";
  j.settings.backend = Backend::host;
  j.settings.world = world;
  j.dir = dir + "/run";
  j.settings.limits.bootstrap_s = 20;
  j.settings.limits.total_s = 60;
  return j;
}

}  // namespace

TEST_CASE("launch: the environment is scrubbed") {
  setenv("OPENAI_API_KEY", "sk-test-planted", 1);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_SECRET_TOKEN", "x", 1);
  setenv("KF_LAUNCH_TEST_OTHER", "1", 1);
  auto env = scrubbed_env("/tmp/s", false, {"CUDA_VISIBLE_DEVICES=3"});
  CHECK(!has_entry(env, "OPENAI_API_KEY"));
  CHECK(!has_entry(env, "NCCL_SECRET_TOKEN"));
  CHECK(!has_entry(env, "KF_LAUNCH_TEST_OTHER"));
  CHECK(has_entry(env, "NCCL_DEBUG=INFO"));
  CHECK(has_entry(env, "PATH="));
  CHECK(has_entry(env, "HOME=/tmp/s"));
  CHECK(has_entry(env, "TMPDIR=/tmp/s"));
  CHECK(has_entry(env, "CUDA_CACHE_PATH=/tmp/s/.nv"));
  CHECK(has_entry(env, "NCCL_NVLS_ENABLE=0"));
  CHECK(has_entry(env, "TORCH_SYMM_MEM_DISABLE_MULTICAST=1"));
  CHECK(has_entry(env, "NVSHMEM_DISABLE_NVLS=1"));
  CHECK(has_entry(env, "CUDA_VISIBLE_DEVICES=3"));
  if (geteuid() == 0) CHECK(has_entry(env, "OMPI_ALLOW_RUN_AS_ROOT=1"));
  auto mc = scrubbed_env("/tmp/s", true, {});
  CHECK(!has_entry(mc, "NVSHMEM_DISABLE_NVLS"));
  unsetenv("OPENAI_API_KEY");
  unsetenv("NCCL_DEBUG");
  unsetenv("NCCL_SECRET_TOKEN");
  unsetenv("KF_LAUNCH_TEST_OTHER");
}

TEST_CASE("launch: mpirun command line") {
  Job j;
  j.settings.world = 4;
  j.dir = "/r";
  LaunchOptions o;
  o.rank_binary = "/bin/kforge-rank";
  auto a = mpirun_argv({j}, o);
  CHECK(a[0] == "mpirun");
  auto np = std::find(a.begin(), a.end(), "-np");
  REQUIRE(np + 1 < a.end());
  CHECK(np[1] == "4");
  CHECK(std::find(a.begin(), a.end(), ":") == a.end());
  CHECK(std::find(a.begin(), a.end(), "--oversubscribe") != a.end());
  CHECK(a[a.size() - 2] == "/bin/kforge-rank");
  CHECK(a.back() == "/r/job.json");
}

TEST_CASE("launch: a wrapper on some ranks makes one MPMD segment per run of ranks") {
  Job j;
  j.settings.world = 4;
  j.dir = "/r";
  LaunchOptions o;
  o.rank_binary = "/bin/kforge-rank";
  o.rank_wrapper = {"/t/ncu", "-o", "x"};
  o.wrapped_ranks = {1, 2};
  auto a = mpirun_argv({j}, o);
  std::string line;
  for (auto& w : a) line += w + " ";
  CHECK(line.find("-np 1 /bin/kforge-rank /r/job.json : -np 2 /t/ncu -o x /bin/kforge-rank "
                  "/r/job.json : -np 1 /bin/kforge-rank /r/job.json ") != std::string::npos);
  o.wrapped_ranks.clear();  // every rank
  a = mpirun_argv({j}, o);
  line.clear();
  for (auto& w : a) line += w + " ";
  CHECK(line.find("-np 4 /t/ncu -o x /bin/kforge-rank /r/job.json ") != std::string::npos);
  CHECK(line.find(" : ") == std::string::npos);
}

TEST_CASE("launch: a missing rank program is an error") {
  std::string dir = launch_temp_dir();
  LaunchOptions o;
  o.rank_binary = dir + "/nope";
  RunResult r;
  std::string err;
  CHECK(!run_job(small_job(dir, 2), o, &r, &err));
  CHECK(err.find("nope") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("launch: ranks that finish leave their status and reports" * doctest::timeout(120)) {
  std::string dir = launch_temp_dir();
  LaunchOptions o;
  o.rank_binary =
      fake_rank(dir,
                "status done '' false 0\n"
                "echo \"{\\\"rank\\\":$r,\\\"pid\\\":$$,\\\"failures\\\":[]}\" > $dir/rank$r.json\n"
                "env > $dir/scratch/env$r.txt\n");
  Job job = small_job(dir, 2);
  setenv("OPENAI_API_KEY", "sk-test-planted", 1);
  RunResult r;
  std::string err;
  REQUIRE(run_job(job, o, &r, &err));
  unsetenv("OPENAI_API_KEY");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(!r.killed_by_watchdog);
  REQUIRE(r.statuses.size() == 2);
  CHECK(r.statuses[1].present);
  CHECK(r.statuses[1].phase == RankPhase::done);
  REQUIRE(r.reports.size() == 2);
  REQUIRE(r.reports[1].has_value());
  CHECK(r.reports[1]->rank == 1);
  CHECK(fs::exists(job.dir + "/job.json"));
  std::ifstream env(job.dir + "/scratch/env0.txt");
  std::string text((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
  CHECK(text.find("sk-test-planted") == std::string::npos);
  CHECK(text.find("HOME=" + job.dir + "/scratch") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("launch: the watchdog kills ranks that overstay their phase" * doctest::timeout(120)) {
  std::string dir = launch_temp_dir();
  LaunchOptions o;
  // Rank 0 spins in its call; rank 1 waits, within its limit.
  o.rank_binary = fake_rank(dir,
                            "if [ $r = 0 ]; then status check 'trial 0 call 0' true 1;"
                            " else status barrier 'after trial 0 call 0' false 30; fi\n"
                            "while true; do sleep 0.05; done\n");
  Job job = small_job(dir, 2);
  job.shm_prefix = "/kf-launch-test-" + std::to_string(getpid());
  RunResult r;
  std::string err;
  REQUIRE(run_job(job, o, &r, &err));
  INFO(r.output);
  CHECK(r.killed_by_watchdog);
  // The MPI segments' directory was cleaned up with the job.
  CHECK(!fs::exists("/dev/shm/kf-launch-test-" + std::to_string(getpid()) + "-mpi"));
  REQUIRE(r.stuck.size() == 1);
  CHECK(r.stuck[0].rank == 0);
  CHECK(r.stuck[0].phase == RankPhase::check);
  CHECK(r.stuck[0].in_candidate);
  CHECK(r.stuck[0].seconds >= 1);
  CHECK(r.limit_s == 1);
  CHECK(r.kill_reason.find("rank 0 stuck in check") != std::string::npos);
  for (auto& s : r.statuses) CHECK(s.present);
  CHECK(wait_none_naming(dir, 5));
  fs::remove_all(dir);
}

TEST_CASE("launch: a rank that never reports is stuck in bootstrap" * doctest::timeout(120)) {
  std::string dir = launch_temp_dir();
  LaunchOptions o;
  o.rank_binary = fake_rank(dir,
                            "if [ $r = 0 ]; then status setup '' false 30; fi\n"
                            "while true; do sleep 0.05; done\n");
  Job job = small_job(dir, 2);
  job.settings.limits.bootstrap_s = 1.5;
  RunResult r;
  std::string err;
  REQUIRE(run_job(job, o, &r, &err));
  CHECK(r.killed_by_watchdog);
  REQUIRE(r.stuck.size() == 1);
  CHECK(r.stuck[0].rank == 1);
  CHECK(r.stuck[0].phase == RankPhase::bootstrap);
  CHECK(wait_none_naming(dir, 5));
  fs::remove_all(dir);
}

TEST_CASE("launch: a crash file is collected" * doctest::timeout(120)) {
  std::string dir = launch_temp_dir();
  LaunchOptions o;
  o.rank_binary = fake_rank(dir,
                            "status check 'trial 0 call 0' true 10\n"
                            "if [ $r = 1 ]; then echo 'signal 11 (SIGSEGV) in check trial 0 call 0'"
                            " > $dir/status/rank1.crash; kill -SEGV $$; fi\n"
                            "sleep 30\n");
  Job job = small_job(dir, 2);
  RunResult r;
  std::string err;
  REQUIRE(run_job(job, o, &r, &err));
  INFO(r.output);
  CHECK(r.exit_code != 0);
  REQUIRE(r.crashes.size() == 1);
  CHECK(r.crashes[0].first == 1);
  CHECK(r.crashes[0].second == "signal 11 (SIGSEGV) in check trial 0 call 0");
  CHECK(wait_none_naming(dir, 5));
  fs::remove_all(dir);
}

TEST_CASE("launch: one launch of two jobs whose bootstrap fails reports why in the first" *
          doctest::timeout(120)) {
  std::string dir = launch_temp_dir();
  LaunchOptions o;
  o.rank_binary = std::string(KF_BINARY_DIR) + "/kforge-rank";
  std::vector<Job> jobs;
  for (const char* label : {"small", "full"}) {
    Job j = small_job(dir, 2);
    j.dir = dir + "/" + label;
    // A tensor shaped for three ranks of two: refused by the bootstrap, after the status
    // files exist.
    JobTensor t;
    t.name = "x";
    t.shape_by_rank = {{4}, {4}, {4}};
    j.tensors = {t};
    j.candidate_is_baseline = true;
    j.candidate_lib = o.rank_binary;  // never loaded: any file the sandbox can bind
    jobs.push_back(j);
  }
  std::vector<RunResult> runs;
  std::string err;
  REQUIRE(run_jobs(jobs, o, &runs, &err));
  REQUIRE(runs.size() == 1);  // the ranks never reached the second job
  INFO(runs[0].output);
  CHECK(runs[0].exit_code == 2);
  REQUIRE(runs[0].reports.size() == 2);
  REQUIRE(runs[0].reports[1].has_value());
  const auto& errors = runs[0].reports[1]->sandbox_errors;  // kforge's error, not a verdict
  CHECK(std::any_of(errors.begin(), errors.end(), [](const std::string& n) {
    return n.find("tensor 'x' has 3 entries in shape_by_rank") != std::string::npos;
  }));
  CHECK(!fs::exists(dir + "/full/rank0.json"));
  fs::remove_all(dir);
}
