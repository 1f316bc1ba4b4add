// src/cli/cmd_sweep_slurm.cpp: see cmd_sweep_slurm.h.
#include "cli/cmd_sweep_slurm.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "cli/commands.h"
#include "sandbox/secrets.h"
#include "suite/paths.h"
#include "sweep/slurm.h"

extern char** environ;

namespace cli {

namespace {

// The arguments that make an array task run this sweep: the problems as resolved here (a
// later `all` must not grow the sweep under a running array), the folder made absolute.
std::vector<std::string> task_argv(const SweepArgs& a, const sweep::SweepConfig& cfg,
                                   const std::vector<std::string>& problems,
                                   const std::vector<std::string>& models) {
  std::vector<std::string> v = {"sweep"};
  v.insert(v.end(), problems.begin(), problems.end());
  v.insert(v.end(), {"--samples", std::to_string(a.samples)});
  for (const std::string& m : models) v.insert(v.end(), {"--model", m});
  v.insert(v.end(), {"--mode", cfg.mode, "--jobs", std::to_string(cfg.jobs)});
  v.insert(v.end(), cfg.solve_args.begin(), cfg.solve_args.end());
  v.insert(v.end(), {"--out", cfg.out});
  return v;
}

// sbatch's environment, which it hands to every task: this process's, with the keys that
// kforge took out of it put back (a task's samples ask the model with them).
std::vector<std::string> sbatch_env() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("KFORGE_DIE_WITH_PARENT=", 0) != 0) env.push_back(*e);
  for (const std::string& s : sandbox::taken_secret_entries()) env.push_back(s);
  return env;
}

}  // namespace

int submit_sweep_to_slurm(const SweepArgs& a, const sweep::SweepConfig& cfg,
                          const std::vector<std::string>& problems,
                          const std::vector<std::string>& models) {
  std::string bad = sweep::reserved_sbatch_arg(a.sbatch);
  if (!bad.empty()) {
    fmt::print(stderr,
               "kforge sweep: --sbatch {} is set by kforge itself (the array, its logs in "
               "DIR/slurm/task-<i>.log); use --array-size N for the number of tasks\n",
               bad);
    return kBadInput;
  }
  int total = static_cast<int>(cfg.samples.size());
  sweep::SlurmJob job;
  job.kforge_bin = cfg.kforge_bin;
  job.sweep_argv = task_argv(a, cfg, problems, models);
  job.out = cfg.out;
  std::error_code ec;
  job.cwd = std::filesystem::current_path(ec).string();
  job.array_size =
      a.array_size > 0 ? std::min(a.array_size, total) : sweep::default_array_size(total, cfg.jobs);
  job.sbatch_args = a.sbatch;
  std::string id, err;
  if (!sweep::submit(job, sbatch_env(), &id, &err)) {
    fmt::print(stderr, "kforge sweep --slurm: {}\n", err);
    return kInternal;
  }
  fmt::print(
      "kforge sweep: submitted Slurm job {}: {} array tasks over {} samples into {}\n"
      "  follow it:  kforge sweep status {}   (squeue -j {}; each task's log is "
      "{}/slurm/task-<i>.log)\n"
      "  resume:     the same command again once the job has ended runs only what is left\n",
      id, job.array_size, total, cfg.out, cfg.out, id, cfg.out);
  return kOk;
}

void use_slurm_allocation(const SweepArgs& a) {
  if (!std::getenv("SLURM_JOB_ID")) return;
  // The samples inherit this process's environment (sweep.cpp's child_env).
  std::string gpus = sweep::gpus_to_make_visible();
  if (!gpus.empty()) setenv("CUDA_VISIBLE_DEVICES", gpus.c_str(), 1);
  sandbox::Backend backend = suite::detect_backend();
  if (!a.opt.backend.empty()) sandbox::parse_enum(a.opt.backend, &backend);  // CLI11 checked it
  std::string warning = sweep::no_gpu_warning(backend);
  if (!warning.empty()) fmt::print(stderr, "{}\n", warning);
}

}  // namespace cli
