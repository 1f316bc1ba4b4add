// sandbox/warm.cpp: see warm.h. The set's mpirun runs under run_process (process.h) in a
// thread of its own; its poll callback is the eval in flight's watchdog, and notices when
// rank 0 has written the eval's served.json (rank/serve.h).
#include "warm.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "evaluate.h"
#include "launch_parts.h"
#include "process.h"
#include "sha256.h"

namespace fs = std::filesystem;

namespace sandbox {

namespace {

using Clock = std::chrono::steady_clock;

// A set serves this many evals, then the next eval starts a new one: what each eval
// leaves in a judge (a copy of the baseline's library, loaded and never unloaded) stays
// bounded.
constexpr int kMaxEvals = 64;
// How long the ranks may take to quit when asked before they are killed.
constexpr double kQuitS = 5;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

struct WarmSet::Eval {
  std::string served_path;
  Watchdog dog;
  RunResult last;          // what the watchdog found
  std::string head, tail;  // the eval's part of mpirun's output
  size_t cap = 1 << 20, elided = 0;
  bool served = false;
  Clock::time_point t0 = Clock::now();
};

bool WarmSet::usable() {
  std::lock_guard<std::mutex> lock(mu_);
  return !ended_ && !retire_ && evals_ < kMaxEvals;
}

bool WarmSet::busy() {
  if (!run_mu_.try_lock()) return true;
  run_mu_.unlock();
  return false;
}

bool WarmSet::poll(std::string* reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (kill_) {
    *reason = "the warm set was stopped";
    return true;
  }
  if (!cur_ || cur_->served) return false;  // between evals nothing is watched
  if (access(cur_->served_path.c_str(), F_OK) == 0) {
    cur_->served = true;
    cv_.notify_all();
    return false;
  }
  return cur_->dog(reason);
}

void WarmSet::on_output(const char* p, size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!cur_) return;  // between evals: nobody's
  Eval& e = *cur_;
  const size_t half = std::max<size_t>(e.cap / 2, 1);
  size_t h = std::min(n, half - std::min(half, e.head.size()));
  e.head.append(p, h);
  e.tail.append(p + h, n - h);
  if (e.tail.size() > 2 * half) {
    e.elided += e.tail.size() - half;
    e.tail.erase(0, e.tail.size() - half);
  }
}

bool WarmSet::start(const std::vector<Job>& jobs, const LaunchOptions& opt, Eval* e,
                    std::string* err) {
  const std::string ctl = root_ + "/ctl";
  std::error_code ec;
  fs::create_directories(ctl + "/status", ec);
  if (ec) return (*err = ctl + ": " + ec.message(), false);
  // Both held open as long as this process lives (read-write, so that the open does not
  // wait for a reader); the ranks see their end when this process dies, however it dies.
  // Not inherited by any child (close-on-exec).
  for (auto [name, fd] : {std::pair{"/requests", &fifo_}, std::pair{"/alive", &alive_}}) {
    const std::string path = ctl + name;
    if ((mkfifo(path.c_str(), 0600) != 0 && errno != EEXIST) ||
        (*fd = open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0)
      return (*err = path + ": cannot make the warm set's FIFO: " + std::strerror(errno), false);
  }
  private_shm_ = isolation_mode() == Isolation::bwrap;
  LaunchOptions o = opt;
  o.rank_args = {"--serve", ctl};
  shm_name_ = detail::place_mpi_segments(jobs[0], private_shm_, &o);
  ProcessSpec spec;
  confined_ = std::make_unique<Confined>();
  if (!detail::launch_spec(jobs, o, &e->dog, &spec, confined_.get(), err, root_)) return false;
  isolation_ = confined_->how();
  spec.limit_s = 0;  // each eval's watchdog has its limits; the set has none
  spec.poll = [this](std::string* reason) { return poll(reason); };
  spec.on_output = [this](const char* p, size_t n) { on_output(p, n); };
  started_ = true;
  thread_ = std::thread([this, spec] {
    ProcessResult pr;
    std::string run_err;
    if (!run_process(spec, &pr, &run_err)) pr.kill_reason = run_err;
    ConfinedRun cr = confined_->finish();
    std::lock_guard<std::mutex> lock(mu_);
    pr_ = pr;
    cr_ = cr;
    ended_ = true;
    cv_.notify_all();
  });
  return true;
}

bool WarmSet::send_request(const std::vector<Job>& jobs, std::string* err) {
  nlohmann::json paths = nlohmann::json::array();
  for (const Job& j : jobs) paths.push_back(j.dir + "/job.json");
  const std::string line = nlohmann::json{{"jobs", paths}}.dump() + "\n";
  // Up to PIPE_BUF bytes go into a pipe whole; rank 0 has read every earlier request.
  if (write(fifo_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    *err = "the warm set's request FIFO: " + std::string(std::strerror(errno));
    return false;
  }
  return true;
}

std::string WarmSet::finish_eval(const std::vector<Job>& jobs, const LaunchOptions& opt, Eval* e,
                                 std::vector<RunResult>* out) {
  RunResult last = e->last;  // stuck ranks and the limit they overran
  last.output = e->elided == 0 ? e->head + e->tail
                               : fmt::format("{}\n[... {} bytes of output elided ...]\n{}", e->head,
                                             e->elided, e->tail);
  last.seconds = since(e->t0);
  std::vector<int> pids;
  if (e->served) {  // the ranks are up and waiting for the next eval
    nlohmann::json s;
    std::string err;
    if (!read_json_file(e->served_path, &s, &err)) s = nlohmann::json::object();
    last.exit_code = s.value("rc", 2);
    const std::string refused = s.value("refused", "");
    if (last.exit_code != 0 && last.exit_code != 1) retire_ = true;  // the ranks end
    if (!refused.empty()) return refused;
    detail::gather(jobs, last, opt, isolation_, "", out, &pids);
    return "";
  }
  // The set ended during the eval: what a launch that ended so would say.
  ProcessResult pr;
  ConfinedRun cr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pr = pr_;
    cr = cr_;
  }
  detail::wait_killed(pr, &last);
  detail::record_end(pr, cr, &last);
  detail::gather(jobs, last, opt, isolation_, root_ + "/ctl", out, &pids);
  if (private_shm_) pids.clear();  // the sandbox's PID namespace ended them all
  detail::clean_up(pids, binary_name_, shm_name_, &out->back().notes);
  return "";
}

bool WarmSet::run(std::vector<Job> jobs, const LaunchOptions& opt, std::vector<RunResult>* out,
                  WarmUse* use, std::string* err) {
  std::lock_guard<std::mutex> busy(run_mu_);
  out->clear();
  *use = WarmUse{};
  use->root = root_;
  if (!usable()) return (*err = "the warm set has ended", false);
  for (const Job& j : jobs)
    if (j.dir.rfind(root_ + "/", 0) != 0)
      return (*err = j.dir + " is not beneath the warm set's root " + root_, false);
  if (shm_prefix_.empty()) shm_prefix_ = jobs.at(0).shm_prefix;
  for (Job& j : jobs) j.shm_prefix = shm_prefix_;  // the heap is the set's, named at its start
  if (!detail::prepare_jobs(jobs, opt, err)) return false;
  Eval e;
  e.served_path = jobs[0].dir + "/served.json";
  e.cap = opt.output_cap;
  binary_name_ = fs::path(opt.rank_binary).filename().string();
  for (const Job& j : jobs) e.dog.dirs.push_back(j.dir);
  e.dog.world = jobs[0].settings.world;
  e.dog.bootstrap_s = jobs[0].settings.limits.bootstrap_s;
  for (const Job& j : jobs) e.dog.total_s += j.settings.limits.total_s;
  if (!jobs[0].build_gate.empty()) e.dog.total_s += jobs[0].settings.limits.build_s;
  e.dog.binary_name = binary_name_;
  e.dog.kill_ranks = isolation_mode() != Isolation::bwrap;
  if (opt.linger_s > 0) e.dog.linger_s = opt.linger_s;
  e.dog.out = &e.last;
  const bool reused = started_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cur_ = &e;
  }
  if (!(reused ? send_request(jobs, err) : start(jobs, opt, &e, err))) {
    std::lock_guard<std::mutex> lock(mu_);
    cur_ = nullptr;
    retire_ = true;
    return false;
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return e.served || ended_; });
    cur_ = nullptr;
    ++evals_;
    *use = WarmUse{true, reused, evals_, root_, ""};
  }
  std::string refused = finish_eval(jobs, opt, &e, out);
  if (refused.empty()) return true;
  fs::remove(e.served_path);
  return (*err = "the warm set refused the eval: " + refused, false);
}

void WarmSet::stop() {
  std::lock_guard<std::mutex> busy(run_mu_);
  if (thread_.joinable()) {
    static const char quit[] = "{\"quit\": true}\n";
    if (fifo_ >= 0 && write(fifo_, quit, sizeof quit - 1) < 0) {
      // the ranks are gone already, or going: the wait below says which
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::duration<double>(kQuitS), [&] { return ended_; })) {
      kill_ = true;  // the next poll kills the launch's tree
      cv_.wait(lock, [&] { return ended_; });
    }
    lock.unlock();
    thread_.join();
    std::vector<std::string> notes;
    wait_gone(pr_.killed_pids, 15.0);
    detail::clean_up({}, binary_name_, shm_name_, &notes);
  }
  for (int* fd : {&fifo_, &alive_})
    if (*fd >= 0) close(*fd), *fd = -1;
  std::lock_guard<std::mutex> lock(mu_);
  retire_ = true;
}

std::string warm_key(const EvalRequest& req) {
  nlohmann::json j = {{"settings", req.settings},
                      {"role", static_cast<int>(req.candidate_role)},
                      {"baseline", !req.baseline_path.empty()},
                      {"problem_dir", req.problem_dir}};
  for (const Instance& inst : req.instances)
    j["instances"].push_back({{"label", inst.label}, {"job", inst.job}});
  const LaunchOptions& o = req.launch;
  j["launch"] = {o.mpirun,    o.rank_binary,         o.mca,          o.extra_args,
                 o.extra_env, o.allow_multicast,     o.memory_bytes, o.max_pids,
                 o.read_only, o.rank_wrapper.empty()};
  return sha256_hex(j.dump());
}

WarmPool::~WarmPool() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& set : sets_) set->stop();
  sets_.clear();
}

std::shared_ptr<WarmSet> WarmPool::set_for(const EvalRequest& req) {
  if (req.candidate_role != Role::candidate || req.settings.under_tool ||
      !req.launch.rank_wrapper.empty())
    return nullptr;
  const std::string key = warm_key(req);
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < sets_.size(); ++i) {
    std::shared_ptr<WarmSet> set = sets_[i];
    if (set->key() != key || set->busy() || !set->usable()) continue;
    sets_.erase(sets_.begin() + static_cast<std::ptrdiff_t>(i));
    sets_.push_back(set);  // the most recently used now
    return set;
  }
  // Sets that ended go; then, past the limit, the least recently used one not busy.
  for (size_t i = 0; i < sets_.size();) {
    if (!sets_[i]->busy() && (!sets_[i]->usable() || sets_.size() >= max_sets_)) {
      sets_[i]->stop();
      sets_.erase(sets_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  if (sets_.size() >= max_sets_) return nullptr;  // every set is busy: this eval runs cold
  const std::string root = make_eval_dir(dir_ + "/warm");
  if (root.empty()) return nullptr;
  sets_.push_back(std::make_shared<WarmSet>(key, root));
  return sets_.back();
}

}  // namespace sandbox
