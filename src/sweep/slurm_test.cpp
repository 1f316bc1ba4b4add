// src/sweep/slurm_test.cpp: the pieces of `kforge sweep --slurm` that need no cluster: the
// batch script (run by a real sh, with words that need quoting), sbatch's arguments, the
// job id, the array size, and the allocation's GPUs. tests/sweep_slurm_test.cpp submits
// to a real one.
#include "sweep/slurm.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "sandbox/process.h"
#include "suite/test_util.h"

namespace sweep {

namespace {

using suite::test::TempDir;

// Keeps the named variables as they were for the tests after this one (the tests may run
// in a Slurm job themselves).
struct EnvGuard {
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  explicit EnvGuard(std::initializer_list<const char*> names) {
    for (const char* n : names) {
      const char* v = std::getenv(n);
      saved.emplace_back(n, v ? std::optional<std::string>(v) : std::nullopt);
    }
  }
  ~EnvGuard() {
    for (auto& [n, v] : saved) v ? setenv(n.c_str(), v->c_str(), 1) : unsetenv(n.c_str());
  }
};

std::string run_sh(const std::string& script, const std::string& cwd) {
  sandbox::ProcessSpec spec;
  spec.argv = {"/bin/sh", script};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd = cwd;
  spec.limit_s = 30;
  sandbox::ProcessResult r;
  std::string err;
  REQUIRE_MESSAGE(sandbox::run_process(spec, &r, &err), err);
  CHECK(r.exit_code == 0);
  return r.output;
}

}  // namespace

TEST_CASE(
    "slurm: the batch script runs the same binary with the same words, from the same "
    "folder") {
  TempDir d;
  // A stand-in for kforge that prints its folder and its arguments one per line.
  std::string bin = d.path + "/bin dir/kforge";
  std::filesystem::create_directories(d.path + "/bin dir");
  std::ofstream(bin) << "#!/bin/sh\npwd\nfor a; do printf '%s\\n' \"$a\"; done\n";
  chmod(bin.c_str(), 0755);
  std::filesystem::create_directories(d.path + "/work here");
  SlurmJob job;
  job.kforge_bin = bin;
  job.sweep_argv = {"sweep",      "all_reduce", "--model", "openai:it's",
                    "--base-url", "$HOME `x`",  "--out",   d.path + "/out"};
  job.out = d.path + "/out";
  job.cwd = d.path + "/work here";
  job.array_size = 3;
  std::string script = batch_script(job);
  CHECK(script.rfind("#!/bin/sh\n", 0) == 0);
  CHECK(script.find("--array=0-2") != std::string::npos);  // how it was submitted
  std::string path = d.path + "/sweep.sbatch";
  std::ofstream(path) << script;
  std::string expect = job.cwd + "\n";
  for (const std::string& w : job.sweep_argv) expect += w + "\n";
  CHECK(run_sh(path, "/") == expect);
}

TEST_CASE("slurm: sbatch's arguments: the array, the task logs, the user's options, the script") {
  SlurmJob job;
  job.out = "/shared/sweeps/50%";
  job.array_size = 4;
  job.sbatch_args = {"--gpus=2", "--time=1:00:00"};
  std::vector<std::string> a = sbatch_argv(job, "/s/sweep.sbatch");
  std::vector<std::string> want = {"sbatch",
                                   "--parsable",
                                   "--array=0-3",
                                   "--job-name=kforge-sweep",
                                   "--output=/shared/sweeps/50%%/slurm/task-%a.log",
                                   "--open-mode=append",
                                   "--gpus=2",
                                   "--time=1:00:00",
                                   "/s/sweep.sbatch"};
  CHECK(a == want);
  CHECK(reserved_sbatch_arg({"--gpus=1", "--array=0-9"}) == "--array=0-9");
  CHECK(reserved_sbatch_arg({"-o", "x"}) == "-o");
  CHECK(reserved_sbatch_arg({"--output"}) == "--output");
  CHECK(reserved_sbatch_arg({"--gpus=1", "-A", "proj", "--open"}) == "");
}

TEST_CASE("slurm: the job id from sbatch --parsable, past its warnings") {
  std::string id, err;
  CHECK(parse_job_id("4242\n", &id, &err));
  CHECK(id == "4242");
  CHECK(parse_job_id("sbatch: warning: no --time given\n77;cluster2\n", &id, &err));
  CHECK(id == "77");
  CHECK_FALSE(parse_job_id("sbatch: error: invalid partition\n", &id, &err));
  CHECK(err.find("invalid partition") != std::string::npos);
  CHECK_FALSE(parse_job_id("", &id, &err));
}

TEST_CASE("slurm: the default array size: one task per --jobs samples, at most 32") {
  CHECK(default_array_size(20, 2) == 10);
  CHECK(default_array_size(20, 3) == 7);
  CHECK(default_array_size(1000, 1) == 32);
  CHECK(default_array_size(3, 8) == 1);
  CHECK(default_array_size(5, 1) == 5);
}

TEST_CASE("slurm: a task keeps its samples to the GPUs Slurm gave it") {
  EnvGuard keep({"CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_JOB_ID"});
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("SLURM_JOB_GPUS");
  setenv("SLURM_JOB_ID", "12", 1);
  CHECK(gpus_to_make_visible() == "");
  CHECK(no_gpu_warning(sandbox::Backend::cuda).find("job 12 was given no GPUs") !=
        std::string::npos);
  CHECK(no_gpu_warning(sandbox::Backend::host) == "");
  setenv("SLURM_JOB_GPUS", "4,5", 1);
  CHECK(gpus_to_make_visible() == "4,5");  // Slurm did not set CUDA_VISIBLE_DEVICES
  CHECK(no_gpu_warning(sandbox::Backend::cuda) == "");
  setenv("CUDA_VISIBLE_DEVICES", "0,1", 1);  // it did (renumbered where devices are confined)
  CHECK(gpus_to_make_visible() == "");
}

}  // namespace sweep
