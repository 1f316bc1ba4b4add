// src/sweep/sweep.cpp: see sweep.h.
#include "sweep/sweep.h"

#include <fmt/format.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "sandbox/process.h"
#include "sandbox/secrets.h"
#include "sweep/outcome.h"

extern char** environ;

namespace sweep {

namespace fs = std::filesystem;

namespace {

// The child's environment: this process's, the keys it took back in (the child is
// kforge, which takes them out again), the sample's own runs folder, the eval slots,
// the sweep's server (when it runs one), and death with us.
std::vector<std::string> child_env(const SweepConfig& cfg, const std::string& dir) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    if (v.rfind("KFORGE_RUNS=", 0) != 0 && v.rfind("KFORGE_DIE_WITH_PARENT=", 0) != 0 &&
        v.rfind("KFORGE_EVAL_LOCKS=", 0) != 0)
      env.push_back(v);
  }
  for (const std::string& s : sandbox::taken_secret_entries()) env.push_back(s);
  env.push_back("KFORGE_RUNS=" + dir + "/runs");
  env.push_back("KFORGE_DIE_WITH_PARENT=1");
  if (!cfg.eval_locks.empty()) env.push_back("KFORGE_EVAL_LOCKS=" + cfg.eval_locks);
  if (!cfg.serve.empty()) {
    std::erase_if(env, [](const std::string& v) { return v.rfind("KFORGE_SERVE=", 0) == 0; });
    env.push_back("KFORGE_SERVE=" + cfg.serve);
  }
  return env;
}

Record start_record(const Sample& s, const std::string& dir) {
  Record r;
  r.problem = s.problem;
  r.category = s.category;
  r.model = s.model;
  r.index = s.index;
  r.seed = s.index;  // the same sample asks the same way on every run
  r.dir = dir;
  r.state = SampleState::running;
  return r;
}

struct Shared {
  const SweepConfig& cfg;
  std::vector<Sample> todo;
  std::atomic<size_t> next{0};
  std::mutex mu;
  Progress progress;
  std::string error;  // the first fatal error
  const std::function<void(const Progress&)>& report;
  // Problems a sample found not runnable on this setup, with why: their other samples
  // are recorded so without a model call (each would pay one to learn the same).
  std::map<std::string, std::string> not_runnable;
};

// Books a finished sample: its record, then the progress.
bool finish(Shared& sh, const Sample& s, const Record& r, std::string* err) {
  std::lock_guard<std::mutex> lock(sh.mu);
  if (!append_record(sh.cfg.ledger_file, r, err)) return false;
  Progress& p = sh.progress;
  --p.running;
  if (r.state == SampleState::done) {
    ++p.done;
    p.correct += r.correct ? 1 : 0;
  } else if (r.state == SampleState::not_runnable) {
    ++p.not_runnable;
  } else {
    ++p.failed;
  }
  p.cost_usd += r.cost_usd;
  p.last = fmt::format("{} {} #{}: {}", s.problem, s.model, s.index,
                       r.state == SampleState::failed ? "failed" : r.status);
  if (r.state == SampleState::not_runnable) sh.not_runnable.emplace(s.problem, r.message);
  if (sh.report) sh.report(p);
  return true;
}

// The problem's record when an earlier sample found it not runnable here; else false.
bool known_not_runnable(Shared& sh, const Sample& s, Record* r) {
  std::lock_guard<std::mutex> lock(sh.mu);
  auto it = sh.not_runnable.find(s.problem);
  if (it == sh.not_runnable.end()) return false;
  *r = start_record(s, "");
  r->state = SampleState::not_runnable;
  r->status = "not_runnable";
  r->message = it->second;
  return true;
}

bool run_one(Shared& sh, const Sample& s, std::string* err) {
  const SweepConfig& cfg = sh.cfg;
  if (Record known; known_not_runnable(sh, s, &known)) return finish(sh, s, known, err);
  std::string dir =
      fmt::format("{}/samples/{}/{}/{}", cfg.out, s.problem, model_dir(s.model), s.index);
  std::error_code ec;
  fs::remove_all(dir, ec);  // an earlier, unfinished attempt: nothing of it is kept
  fs::create_directories(dir, ec);
  Record r = start_record(s, dir);
  {
    std::lock_guard<std::mutex> lock(sh.mu);
    if (!append_record(cfg.ledger_file, r, err)) return false;
  }
  sandbox::ProcessSpec spec;
  spec.argv = {cfg.kforge_bin, "solve", s.problem,    "--headless",
               "--model",      s.model, "--mode",     cfg.mode,
               "--out",        dir,     "--llm-seed", std::to_string(r.seed)};
  spec.argv.insert(spec.argv.end(), cfg.solve_args.begin(), cfg.solve_args.end());
  spec.env = child_env(cfg, dir);
  sandbox::ProcessResult pr;
  if (!sandbox::run_process(spec, &pr, err)) return false;
  if (pr.interrupted) {
    *err = "interrupted";
    return false;
  }
  read_outcome(dir, pr.signal ? 128 + pr.signal : pr.exit_code, pr.output, &r);
  r.seconds = pr.seconds;
  // Bad input, where not this problem's alone: every sample would say the same.
  if (!pr.killed && pr.exit_code == 2 && r.state != SampleState::not_runnable) {
    *err = fmt::format("kforge solve {} said its input is bad:\n{}", s.problem, pr.output);
    std::lock_guard<std::mutex> lock(sh.mu);
    sh.progress.bad_input = true;
    return false;
  }
  return finish(sh, s, r, err);
}

void worker(Shared& sh) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(sh.mu);
      if (!sh.error.empty()) return;
    }
    size_t i = sh.next++;
    if (i >= sh.todo.size()) return;
    {
      std::lock_guard<std::mutex> lock(sh.mu);
      ++sh.progress.running;
      if (sh.report) sh.report(sh.progress);
    }
    std::string err;
    if (!run_one(sh, sh.todo[i], &err)) {
      std::lock_guard<std::mutex> lock(sh.mu);
      if (sh.error.empty()) sh.error = err;
      return;
    }
  }
}

}  // namespace

bool run_sweep(const SweepConfig& cfg, const std::function<void(const Progress&)>& on_progress,
               Progress* progress, std::string* err) {
  std::vector<Record> records;
  int torn = 0;
  if (!read_ledgers(cfg.out, &records, &torn, err)) return false;
  std::map<std::string, Record> done = finished(records);
  Shared sh{cfg, {}, {}, {}, {}, {}, on_progress, {}};
  for (size_t i = 0; i < cfg.samples.size(); ++i) {
    const Sample& s = cfg.samples[i];
    if (static_cast<int>(i % cfg.tasks) != cfg.task) continue;
    ++sh.progress.total;
    auto it = done.find(sample_key(start_record(s, "")));
    if (it == done.end()) {
      sh.todo.push_back(s);
      continue;
    }
    ++sh.progress.skipped;
    ++sh.progress.done;
    sh.progress.correct += it->second.correct ? 1 : 0;
    sh.progress.cost_usd += it->second.cost_usd;
  }
  if (on_progress) on_progress(sh.progress);
  std::vector<std::thread> threads;
  for (int j = 0; j < std::max(1, cfg.jobs); ++j) threads.emplace_back(worker, std::ref(sh));
  for (auto& t : threads) t.join();
  if (progress) *progress = sh.progress;
  if (!sh.error.empty()) *err = sh.error;
  return sh.error.empty();
}

}  // namespace sweep
