// src/sweep/slurm.h: a sweep as a Slurm job array (`kforge sweep --slurm`). The submitting
// kforge writes DIR/slurm/sweep.sbatch, a script that runs this same kforge binary with the
// same sweep arguments, and hands it to `sbatch --array=0-(N-1)`. Every array task is then
// an ordinary `kforge sweep` that sees SLURM_ARRAY_TASK_ID/_COUNT, takes every COUNT-th
// sample and appends to DIR/ledger-<task>.jsonl (sweep.h); it skips what any ledger file
// has finished, so a second submission resumes like a second local run. Nothing here
// talks to Slurm but through its own commands: no accounting database, no REST API.
#pragma once

#include <string>
#include <vector>

#include "sandbox/job_enums.h"

namespace sweep {

struct SlurmJob {
  std::string kforge_bin;                // absolute: the tasks run this very binary
  std::vector<std::string> sweep_argv;   // "sweep", the problems, ..., "--out", DIR
  std::string out;                       // DIR, absolute
  std::string cwd;                       // where relative paths in sweep_argv resolve
  int array_size = 1;                    // N tasks: 0..N-1
  std::vector<std::string> sbatch_args;  // the user's, passed on as they are
};

// The default N: enough tasks for each to run its `jobs` samples at once, and at most 32
// (a cluster's queue limits count array tasks one by one), never more than the samples.
int default_array_size(int samples, int jobs);

// An sbatch option of the user's that kforge sets itself (--array, --output, ...), or "".
std::string reserved_sbatch_arg(const std::vector<std::string>& args);

// The batch script, DIR/slurm/sweep.sbatch.
std::string batch_script(const SlurmJob& job);

// `sbatch --parsable --array=0-(N-1) ... SCRIPT`: the tasks' output in
// DIR/slurm/task-<i>.log (appended to, so a resubmission keeps the earlier run's lines).
std::vector<std::string> sbatch_argv(const SlurmJob& job, const std::string& script);

// The job id from `sbatch --parsable`'s output ("123" or "123;cluster"), skipping any
// warning lines before it. False with *err quoting the output when there is none.
bool parse_job_id(const std::string& output, std::string* id, std::string* err);

// Writes the script and submits it. *job_id on success; false with *err naming the
// command and what to do (no sbatch on PATH, or sbatch refused the job). `env` is the
// environment sbatch gets, which it hands to every task (its default --export=ALL).
bool submit(const SlurmJob& job, const std::vector<std::string>& env, std::string* job_id,
            std::string* err);

// In a Slurm job that was given GPUs, what CUDA_VISIBLE_DEVICES must be for the samples
// to keep to them when the environment does not say already (Slurm sets it itself where
// gres.conf lets it): the allocation's GPU ids, or "" when there is nothing to set.
std::string gpus_to_make_visible();

// A task on the cuda backend that Slurm gave no GPUs would use every GPU of its node, the
// ones other jobs were given too: a warning saying so and what to pass, or "".
std::string no_gpu_warning(sandbox::Backend backend);

// 'word' quoted for sh.
std::string sh_quote(const std::string& word);

}  // namespace sweep
