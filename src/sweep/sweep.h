// src/sweep/sweep.h: K samples per problem and model, each a `kforge solve --headless`
// of its own (the solve loop as it is: one code path, not a copy), N at a time, every
// sample's start and outcome in the ledger (ledger.h) as it happens. Run again, it skips
// the samples the ledger has finished and reruns the ones it had only started or that
// failed (their folder is cleared first; the samples of a killed sweep died with it:
// KFORGE_DIE_WITH_PARENT).
//
// Concurrency: each sample is a process and N run at once, so N model calls overlap.
// Their evals take slots (eval/eval_slot.h, KFORGE_EVAL_LOCKS): one eval at a time per
// GPU set, cores/world at once on the host backend, across every sweep on the machine.
// A sample's folder (out/samples/P/M/i) holds its runs, trajectory, best kernel and
// verdict.json, and its evals' scratch under its runs: no two samples share a path.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/ledger.h"

namespace sweep {

struct Sample {
  std::string problem, category, model;
  int index = 0;
};

// DIR/sweep.json: what the sweep was asked, so a rerun can tell whether it is the same
// sweep and `status` can count what is still pending.
struct PlanFile {
  int version = 1;
  std::vector<std::string> problems, categories, models;
  int samples = 0;
  std::string mode;
  std::vector<std::string> solve_args;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PlanFile, version, problems, categories, models,
                                                samples, mode, solve_args)

bool write_plan(const std::string& dir, const PlanFile& p, std::string* err);
// False with no *err when there is none; with *err when it does not parse.
bool read_plan(const std::string& dir, PlanFile* p, std::string* err);
// Whether a sweep planned as `now` may continue in a folder planned as `before`: the
// same mode and solve options (samples run under other budgets would not add up); the
// problems, models and sample count may differ. False with *err saying what differs.
bool same_sweep(const PlanFile& before, const PlanFile& now, std::string* err);

struct SweepConfig {
  std::vector<Sample> samples;          // every sample of the sweep, in order
  std::vector<std::string> solve_args;  // passed to every `kforge solve` after its own
  std::string mode = "direct";
  int jobs = 1;
  std::string out;          // the sweep's folder (absolute)
  std::string kforge_bin;   // this executable
  std::string ledger_file;  // out/ledger.jsonl, or a task's own file
  std::string eval_locks;   // KFORGE_EVAL_LOCKS for the samples
  std::string serve;        // KFORGE_SERVE for the samples: a server of the sweep's, or ""
  int task = 0, tasks = 1;  // this process runs the samples whose number % tasks == task
};

struct Progress {
  int total = 0;         // this process's samples
  int done = 0;          // finished, earlier runs included
  int failed = 0;        // failed in this run
  int not_runnable = 0;  // in this run: the problem's reference fails on this setup
  int running = 0;       // now
  int correct = 0;       // of the finished
  int skipped = 0;       // finished by an earlier run
  double cost_usd = 0;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::string last;  // the sample that last finished, and how
  // A sample's solve said its input was bad (exit code 2): every sample would, so the
  // sweep stopped there.
  bool bad_input = false;
  int left() const { return total - done - failed - not_runnable - running; }
};

// Plans: every (model, problem, index) of the sweep, index 0..samples-1.
std::vector<Sample> plan(const std::vector<std::string>& problems,
                         const std::vector<std::string>& categories,
                         const std::vector<std::string>& models, int samples);

// Runs what the ledger has not finished. False with *err when the ledger cannot be
// written, or a sample said its input was bad (exit code 2: its output is in *err). A
// sample that finds its problem not runnable on this setup (its reference fails here)
// does not stop the sweep: the problem's other samples are recorded so, unrun.
// *progress ends as the last report.
bool run_sweep(const SweepConfig& cfg, const std::function<void(const Progress&)>& on_progress,
               Progress* progress, std::string* err);

// A folder name for a model ("openai:gpt-5" -> "openai_gpt-5").
std::string model_dir(const std::string& model);

}  // namespace sweep
