// pkb/warm.cpp: see warm.h. The server's side is sandbox/pkb/pkb_serve.py.
#include "pkb/warm.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "pkb/evaluate.h"
#include "pkb/job.h"
#include "pkb/text.h"
#include "sandbox/evaluate.h"
#include "sandbox/launch.h"
#include "sandbox/sha256.h"
#include "suite/paths.h"

namespace fs = std::filesystem;

namespace pkb {

namespace {

// Seconds on a clock no one can set back (the eval's limit is measured on it).
double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string server_key(const EvalSpec& spec, const std::vector<std::string>& argv) {
  return fmt::format("{}\n{}\n{}\n{}\n{}", argv[0], argv[1], spec.checkout, argv.back(),
                     spec.confine);
}

// The last `cap` bytes of a file (a job's output as a cold job's capture would keep it).
std::string tail_of_file(const std::string& path, size_t cap) {
  std::string s = read_text(path);
  if (s.size() <= cap) return s;
  return fmt::format("[... {} bytes of output elided ...]\n{}", s.size() - cap,
                     s.substr(s.size() - cap));
}

}  // namespace

bool WarmInterpreter::poll(std::string* reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (kill_) return (*reason = "the warm interpreter was stopped", true);
  if (done_.empty() || done_seen_) return false;  // between evals nothing is watched
  if (access(done_.c_str(), F_OK) == 0) {
    done_seen_ = true;
    cv_.notify_all();
    return false;
  }
  if (now_s() > deadline_) {
    over_ = true;
    return (*reason = "the eval's time limit", true);
  }
  return false;
}

bool WarmInterpreter::start(const EvalSpec& spec, std::string* err) {
  const std::vector<std::string> argv = job_argv(spec);
  const std::string ctl = root_ + "/ctl", cache = argv.back();
  const std::string server = suite::default_paths().source_root + "/sandbox/pkb/pkb_serve.py";
  std::error_code ec;
  fs::create_directories(ctl, ec);
  fs::create_directories(cache, ec);
  const std::string fifo = ctl + "/requests";
  // Held open read-write (the open waits for no reader) as long as the interpreter lives;
  // close-on-exec, so that no child holds it: the server sees its end when kforge's goes.
  if ((mkfifo(fifo.c_str(), 0600) != 0 && errno != EEXIST) ||
      (fifo_ = open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0)
    return (*err = fifo + ": cannot make the interpreter's FIFO: " + std::strerror(errno), false);
  sandbox::ProcessSpec ps;
  ps.argv = {argv[0],    server,  "--ctl",  ctl,   "--pkb",  spec.checkout,
             "--driver", argv[1], "--hide", root_, "--hide", cache};
  ps.env = sandbox::scrubbed_env(ctl, false, {});
  ps.cwd = ctl;
  ps.output_cap = 64 << 10;
  ps.poll = [this](std::string* reason) { return poll(reason); };
  confined_ = std::make_unique<sandbox::Confined>();
  if (spec.confine && sandbox::isolation_mode() == sandbox::Isolation::bwrap) {
    ps.argv.push_back("--private-shm");
    sandbox::Confinement jail;
    jail.read_only = {spec.checkout, fs::absolute(argv[1]).parent_path().string(),
                      fs::path(server).parent_path().string()};
    for (auto& dir : python_dirs(argv[0], ps.env)) jail.read_only.push_back(dir);
    jail.writable = {root_, cache};
    jail.gpu = true;
    if (!confined_->prepare(jail, &ps, err)) return false;
  }
  key_ = server_key(spec, argv);
  isolation_ = confined_->how();
  evals_ = 0;
  started_ = true;
  thread_ = std::thread([this, ps, ctl] {
    sandbox::ProcessResult pr;
    std::string run_err;
    if (!sandbox::run_process(ps, &pr, &run_err)) pr.kill_reason = run_err;
    confined_->finish();
    // Unconfined, an eval's child (its own process group) outlives a server that died:
    // every child carries the server's command line, which names ctl.
    for (int pid : sandbox::processes_naming(ctl)) kill(pid, SIGKILL);
    std::lock_guard<std::mutex> lock(mu_);
    server_ = pr;
    ended_ = true;
    cv_.notify_all();
  });
  return true;
}

bool WarmInterpreter::run(const EvalSpec& spec, sandbox::ProcessResult* pr, WarmUse* use,
                          std::string* err) {
  std::lock_guard<std::mutex> busy(run_mu_);
  *use = WarmUse{};
  if (!broken_.empty()) return (*err = broken_, false);
  if (spec.work_dir.rfind(root_ + "/", 0) != 0)
    return (*err = spec.work_dir + " is not beneath the interpreter's root " + root_, false);
  // The candidate is read from its own folder: nothing else of the run is in its reach.
  EvalSpec s = spec;
  s.solution = spec.work_dir + "/solution.py";
  std::error_code ec;
  if (fs::absolute(spec.solution) != fs::absolute(s.solution))
    fs::copy_file(spec.solution, s.solution, fs::copy_options::overwrite_existing, ec);
  if (ec) return (*err = s.solution + ": cannot copy the candidate: " + ec.message(), false);
  const std::vector<std::string> argv = job_argv(s);
  bool reused;
  {
    std::lock_guard<std::mutex> lock(mu_);
    reused = started_ && !ended_ && key_ == server_key(s, argv);
  }
  if (!reused) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (started_ && ended_ && evals_ == 0)  // started early (prestart), ended serving none
        broken_ = ended_early();
    }
    if (!broken_.empty()) return (*err = broken_, false);
    stop();
    if (!start(s, err)) return false;
  }
  const std::string cache = argv.back();
  const std::string own = cache + "/" + sandbox::sha256_hex(read_text(s.solution)).substr(0, 16);
  fs::create_directories(own, ec);
  nlohmann::json env = nlohmann::json::object();
  for (const std::string& kv : sandbox::scrubbed_env(spec.work_dir + "/scratch", false, {}))
    env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  // The server says the eval ended in its own ctl/, which no child can reach: a candidate
  // that wrote it itself would end its eval early while it still ran.
  const std::string done =
      fmt::format("{}/ctl/done-{}.json", root_, fs::path(spec.work_dir).filename().string());
  nlohmann::json req = {{"argv", std::vector<std::string>(argv.begin() + 2, argv.end())},
                        {"env", env},
                        {"dir", spec.work_dir},
                        {"done", done},
                        {"writable", {own}}};
  const std::string req_path = spec.work_dir + "/request.json";
  if (!(std::ofstream(req_path) << req.dump()))
    return (*err = req_path + ": cannot write the request", false);
  const std::string line = nlohmann::json{{"request", req_path}}.dump() + "\n";
  const double t0 = now_s();
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = done;
    deadline_ = t0 + spec.timeout_s;
    done_seen_ = over_ = false;
  }
  // Up to PIPE_BUF bytes go into a pipe whole.
  if (write(fifo_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    std::lock_guard<std::mutex> lock(mu_);
    done_.clear();
    return (*err = "the interpreter's FIFO: " + std::string(std::strerror(errno)), false);
  }
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_seen_ || ended_; });
  done_.clear();
  // A server that ended before the eval's child began (its python could not import the
  // driver): not the candidate's doing; the eval runs cold.
  // It is not started again: every eval would pay for the attempt.
  if (!done_seen_ && !over_ && !fs::exists(spec.work_dir + "/job.log")) {
    broken_ = ended_early();
    return (*err = broken_, false);
  }
  *use = WarmUse{true, reused, ++evals_};
  *pr = sandbox::ProcessResult{};
  pr->seconds = now_s() - t0;
  pr->output = tail_of_file(spec.work_dir + "/job.log", 1 << 20);
  if (done_seen_) {
    nlohmann::json d = nlohmann::json::parse(read_text(done), nullptr, false);
    pr->exit_code = d.is_object() ? d.value("rc", -1) : -1;
    pr->signal = d.is_object() ? d.value("signal", 0) : 0;
    return true;
  }
  // The server ended during the eval: past the eval's limit (killed here: the timeout
  // the job's phase files explain), or it died, which only the eval's child could do.
  pr->signal = SIGKILL;
  if (over_) {
    pr->killed = pr->timed_out = true;
    pr->kill_reason = fmt::format("time limit of {:.0f} s", spec.timeout_s);
  } else {
    pr->output +=
        "\nkforge's warm PKB interpreter ended during the eval (did the candidate kill "
        "it?): " +
        tail(server_.kill_reason + server_.output, 400);
  }
  return true;
}

std::string WarmInterpreter::ended_early() const {
  return "the warm interpreter ended before the eval began: " +
         trim_end(tail(server_.kill_reason + server_.output, 400));
}

bool WarmInterpreter::prestart(const EvalSpec& spec, std::string* err) {
  std::lock_guard<std::mutex> busy(run_mu_);
  if (!broken_.empty()) return (*err = broken_, false);
  if (up()) return true;
  stop();
  return start(spec, err);
}

void WarmInterpreter::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    kill_ = true;
  }
  if (thread_.joinable()) thread_.join();
  if (fifo_ >= 0) close(fifo_);
  fifo_ = -1;
  std::lock_guard<std::mutex> lock(mu_);
  started_ = ended_ = kill_ = false;
}

std::string interpreter_key(const EvalSpec& spec) {
  return server_key(spec, job_argv(spec));
}

WarmPool::~WarmPool() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, w] : all_) w->stop();
}

std::shared_ptr<WarmInterpreter> WarmPool::interpreter_for(const EvalSpec& spec) {
  const std::string key = interpreter_key(spec);
  std::lock_guard<std::mutex> lock(mu_);
  // Idle: held by the pool alone (a caller holds one while its eval runs).
  auto idle = [](const std::shared_ptr<WarmInterpreter>& w) { return w.use_count() == 1; };
  for (size_t i = 0; i < all_.size(); ++i) {
    if (all_[i].first != key || !idle(all_[i].second)) continue;
    auto entry = all_[i];
    all_.erase(all_.begin() + static_cast<std::ptrdiff_t>(i));
    all_.push_back(entry);
    return entry.second;
  }
  for (size_t i = 0; i < all_.size() && all_.size() >= max_;) {
    if (idle(all_[i].second)) {
      all_[i].second->stop();
      all_.erase(all_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  if (all_.size() >= max_) return nullptr;
  const std::string root = sandbox::make_eval_dir(dir_ + "/pkb");
  if (root.empty()) return nullptr;
  all_.emplace_back(key, std::make_shared<WarmInterpreter>(root));
  return all_.back().second;
}

}  // namespace pkb
