// pkb/warm.h: the warm interpreter for PKB evals. A cold PKB job starts python, imports
// torch, Dynamo and the checkout's modules (about 5 s on an H100, bench/RESULTS.md), then
// runs a few seconds of trials. A WarmInterpreter runs kforge's sandbox/pkb/pkb_serve.py
// once, under the same jail a job gets (the checkout, the driver's folder and python's
// installation read-only; the interpreter's root and the extension cache writable), and it
// forks a fresh child per eval that Landlock confines to that eval's folder and its
// source's extension folder (the server's and other evals' files out of its reach), and
// whose every process is killed when it ends. An eval whose child outlives its limit, or
// during which the server ends (a candidate may kill it), ends the interpreter: the next
// eval starts a new one. The interpreter ends with this process (kforge-confine's
// PR_SET_PDEATHSIG; unconfined, its own).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/confine.h"
#include "sandbox/process.h"

namespace pkb {

struct EvalSpec;

// How an eval used the interpreter, for the verdict's note.
struct WarmUse {
  bool used = false;    // the eval ran as a child of the interpreter
  bool reused = false;  // ... which was up before it: no python or torch start-up
  int eval = 0;         // its number in the interpreter (1: the one that started it)
};

class WarmInterpreter {
 public:
  // root: a folder of this interpreter's own, made here; the evals' folders are made
  // beneath it.
  explicit WarmInterpreter(std::string root) : root_(std::move(root)) {}
  WarmInterpreter(const WarmInterpreter&) = delete;
  WarmInterpreter& operator=(const WarmInterpreter&) = delete;
  ~WarmInterpreter() { stop(); }

  const std::string& root() const { return root_; }
  // How the server is confined (confine.h's words), once started.
  std::string isolation() {
    std::lock_guard<std::mutex> lock(mu_);
    return isolation_;
  }
  // Whether its server runs now.
  bool up() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_ && !ended_;
  }
  // Runs spec's job as a child of the interpreter (started on the first call, or again
  // after one ended), as run_job would: *pr as a cold job's would read. spec.work_dir must
  // be beneath root(). False (with *err) when the eval did not run on it: the caller runs
  // it cold. A server that ends before its first eval begins (a python that cannot run it,
  // a kernel without Landlock) is not started again.
  bool run(const EvalSpec& spec, sandbox::ProcessResult* pr, WarmUse* use, std::string* err);
  // Starts the interpreter for evals like spec (its python, driver, checkout, cache) now,
  // so that its start (python, torch, Dynamo: ~12 s of a first eval on an H100) overlaps
  // what comes before the first eval: a model's first reply. Nothing where it is up.
  // False (*err) where it cannot start: the first eval then tries as run() says.
  bool prestart(const EvalSpec& spec, std::string* err);
  void stop();

 private:
  bool start(const EvalSpec& spec, std::string* err);
  bool poll(std::string* reason);
  // Why a server that ended before an eval began cannot serve (its output); under mu_.
  std::string ended_early() const;

  const std::string root_;
  std::mutex run_mu_;  // one eval at a time
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  std::unique_ptr<sandbox::Confined> confined_;
  std::string isolation_;
  std::string broken_;   // why it cannot serve here (its server ended before an eval began)
  std::string key_;      // what the server was started for (python, driver, checkout, cache)
  std::string done_;     // the eval in flight's done.json, "" between evals
  double deadline_ = 0;  // its limit, on now_s()'s clock
  bool started_ = false, ended_ = false, kill_ = false, done_seen_ = false, over_ = false;
  int evals_ = 0;
  int fifo_ = -1;
  sandbox::ProcessResult server_;  // how the server ended
};

// The specs one interpreter may serve: the same python, driver, checkout, extension
// cache and confinement.
std::string interpreter_key(const EvalSpec& spec);

// A server's interpreters (`kforge serve`, a sweep's server): one per key and eval in
// flight, up to max; past it, the least recently used idle one is stopped, and where
// every one is busy the eval runs cold (null). Stops them when destroyed.
class WarmPool {
 public:
  WarmPool(std::string dir, int max) : dir_(std::move(dir)), max_(max < 1 ? 1 : max) {}
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;
  ~WarmPool();
  // The interpreter for spec, held by the caller alone while it keeps the pointer.
  std::shared_ptr<WarmInterpreter> interpreter_for(const EvalSpec& spec);

 private:
  std::mutex mu_;
  std::string dir_;
  size_t max_;
  std::vector<std::pair<std::string, std::shared_ptr<WarmInterpreter>>> all_;  // LRU first
};

}  // namespace pkb
