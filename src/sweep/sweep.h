// src/sweep/sweep.h: K samples per problem and model, each a `kforge solve --headless`
// of its own (the solve loop as it is: one code path), N at a time, every sample's
// start and outcome in the ledger (ledger.h) as it happens. Run again, it skips the
// samples the ledger has finished and reruns the ones it had only started (their folder
// is cleared first; the samples of a killed sweep died with it: KFORGE_DIE_WITH_PARENT).
//
// Concurrency: each sample is a process; N of them run at once. Their evals share the
// machine's GPUs through kforge's own per-eval sandboxes; on one GPU several samples'
// evals then time-share it, so for speed figures run GPU sweeps with --jobs 1 (model
// calls are what --jobs > 1 overlaps). A sample's folder (out/samples/P/M/i) holds its
// runs, trajectory, best kernel and verdict.json: no two samples share a path.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sweep/ledger.h"

namespace sweep {

struct Sample {
  std::string problem, category, model;
  int index = 0;
};

struct SweepConfig {
  std::vector<Sample> samples;          // every sample of the sweep, in order
  std::vector<std::string> solve_args;  // passed to every `kforge solve` after its own
  std::string mode = "direct";
  int jobs = 1;
  std::string out;          // the sweep's folder (absolute)
  std::string kforge_bin;   // this executable
  std::string ledger_file;  // out/ledger.jsonl, or a task's own file
  int task = 0, tasks = 1;  // this process runs the samples whose number % tasks == task
};

struct Progress {
  int total = 0, done = 0, running = 0, correct = 0, skipped = 0;
  double cost_usd = 0, seconds = 0;
  std::string last;  // the sample that last finished, and how
};

// Plans: every (model, problem, index) of the sweep, index 0..samples-1.
std::vector<Sample> plan(const std::vector<std::string>& problems,
                         const std::vector<std::string>& categories,
                         const std::vector<std::string>& models, int samples);

// Runs what the ledger has not finished. False with *err when the ledger cannot be
// written, or a sample said its input was bad (exit code 2: its output is in *err).
bool run_sweep(const SweepConfig& cfg, const std::function<void(const Progress&)>& on_progress,
               std::string* err);

// A folder name for a model ("openai:gpt-5" -> "openai_gpt-5").
std::string model_dir(const std::string& model);

}  // namespace sweep
