// sandbox/warm.h: warm ranks. The trusted side of an eval (mpirun, the kforge-rank judges,
// their device contexts, the symmetric heap, NCCL) started once and kept for the evals
// that follow with the same key: the problem, its sizes, the settings, the world, the
// backend and the launch options (warm_key). The ranks run in serve mode (rank/serve.h):
// each eval is a request, run exactly as the jobs of one launch (a fresh runner per job
// with every protection, a fresh secret, the heap zeroed); only the bootstrap is skipped.
//
// A set is one mpirun, run by a thread of this process under the same jail as a launch
// (confine.h), with its root folder bound writable whole: every eval it serves has its
// folder beneath that root (make the eval's folder with make_eval_dir(set->root())), and
// nothing else is bound that a launch would not bind. Each eval has a watchdog of its own
// with its own limits (watchdog.h). An eval that does not end cleanly (a crash, a hang, a
// sandbox failure) ends the set: the next eval starts a new one. The ranks end with this
// process: `quit` on a normal end, and when this process dies (even by SIGKILL) rank 0
// sees its request FIFO lose its last writer and the set ends; kforge-confine's
// PR_SET_PDEATHSIG ends a confined set at once.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "confine.h"
#include "launch.h"
#include "watchdog.h"

namespace sandbox {

struct EvalRequest;

// How an eval used its warm set, for the verdict's note.
struct WarmUse {
  bool used = false;    // the eval ran on the set's ranks
  bool reused = false;  // ... which were up before it: no bootstrap
  int eval = 0;         // its number in the set (1: the one that started it)
  std::string root;
  std::string fallback;  // why the eval ran cold after all ("" when it did not)
};

class WarmSet {
 public:
  WarmSet(std::string key, std::string root) : key_(std::move(key)), root_(std::move(root)) {}
  WarmSet(const WarmSet&) = delete;
  WarmSet& operator=(const WarmSet&) = delete;
  ~WarmSet() { stop(); }

  const std::string& key() const { return key_; }
  const std::string& root() const { return root_; }
  // Whether a next eval may use the set: it has not ended, nor served its share of evals.
  bool usable();
  bool busy();

  // As run_jobs (launch.h), on the set's ranks: started with these jobs on mpirun's
  // command line when the set has none, else sent as a request. False (with *err) when
  // nothing ran on the set (it could not start, it had ended, it refused the eval): the
  // caller runs the jobs cold instead. The jobs' folders must be beneath root().
  bool run(std::vector<Job> jobs, const LaunchOptions& opt, std::vector<RunResult>* out,
           WarmUse* use, std::string* err);

  // Asks the ranks to quit, waits for them (killing them after a few seconds), cleans up.
  void stop();

 private:
  struct Eval;  // the eval in flight (warm.cpp)
  bool start(const std::vector<Job>& jobs, const LaunchOptions& opt, Eval* e, std::string* err);
  bool send_request(const std::vector<Job>& jobs, std::string* err);
  bool poll(std::string* reason);
  void on_output(const char* p, size_t n);
  // The eval's results into *out; the ranks' refusal instead, when they refused it.
  std::string finish_eval(const std::vector<Job>& jobs, const LaunchOptions& opt, Eval* e,
                          std::vector<RunResult>* out);

  const std::string key_, root_;
  std::mutex run_mu_;  // one eval at a time
  std::mutex mu_;      // what the launch's thread shares with the eval's
  std::condition_variable cv_;
  std::thread thread_;
  std::unique_ptr<Confined> confined_;
  Eval* cur_ = nullptr;
  bool started_ = false, ended_ = false, retire_ = false, kill_ = false;
  int evals_ = 0;
  int fifo_ = -1, alive_ = -1;  // <root>/ctl/requests and <root>/ctl/alive (rank/serve.h)
  std::string shm_prefix_, shm_name_, binary_name_, isolation_;
  bool private_shm_ = false;
  ProcessResult pr_;
  ConfinedRun cr_;
};

// The key of the evals that may share a set (a hash of what the bootstrap depends on).
std::string warm_key(const EvalRequest& req);

// One process's warm sets: up to max_sets (a solve or a tune evaluates one problem: one;
// `kforge serve` keeps a few, for the problems its clients evaluate by turns). A new set
// past the limit stops the one used least recently that is not busy. Stops its sets when
// destroyed.
class WarmPool {
 public:
  explicit WarmPool(std::string evals_dir, int max_sets = 1)
      : dir_(std::move(evals_dir)), max_sets_(max_sets < 1 ? 1 : max_sets) {}
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;
  ~WarmPool();
  // The set `req` should run on, or null when it runs cold: a baseline's eval (a problem's
  // NCCL code as the candidate), one under a tool or wrapper, or every set is busy.
  std::shared_ptr<WarmSet> set_for(const EvalRequest& req);

 private:
  std::mutex mu_;
  std::string dir_;
  size_t max_sets_;
  std::vector<std::shared_ptr<WarmSet>> sets_;  // the least recently used first
};

}  // namespace sandbox
