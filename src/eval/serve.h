// eval/serve.h: `kforge serve`: warm ranks (sandbox/warm.h) kept by a process of their
// own, for the evals of other kforge commands (eval/serve_client.h: KFORGE_SERVE). It
// listens on a Unix socket (mode 0600; only this user's processes are answered, by their
// credentials), runs each request's eval as the client's own would run (the same
// sandbox::evaluate, the candidate in fresh runners with every protection) on a warm set
// of its pool, and answers with the verdict. Requests are served side by side; an eval
// slot (eval/eval_slot.h), which the client holds, keeps two off one GPU.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "eval/serve_proto.h"
#include "suite/paths.h"

namespace eval {

struct ServeOptions {
  std::string socket;     // the path to listen on
  int max_sets = 4;       // warm sets kept at once (each holds its ranks' device contexts)
  std::string evals_dir;  // where the sets' folders go ("": <runs>/evals)
  // Set by another thread to end the server (a sweep's, in its own process); null: only
  // a signal ends it.
  const std::atomic<bool>* stop = nullptr;
  // Serves a request that holds a PKB eval (ServeRequest::pkb); unset: such requests are
  // refused and their clients evaluate on their own.
  std::function<ServeReply(const ServeRequest&)> pkb;
};

// Serves until a signal asks this process to stop (sandbox/interrupt.h) or o.stop is
// set, then ends its sets and removes the socket. `on_ready` is called once it listens. False with
// *err when it cannot listen (the path is taken by a live server, or cannot be made).
bool serve_evals(const ServeOptions& o, const suite::Paths& paths,
                 const std::function<void()>& on_ready, std::string* err);

// A server on a thread of this process (a sweep's, for its samples): started by start(),
// which waits until it listens; stopped, its sets ended, when destroyed.
class ServeThread {
 public:
  ServeThread() = default;
  ServeThread(const ServeThread&) = delete;
  ServeThread& operator=(const ServeThread&) = delete;
  ~ServeThread();
  // False with *err when it could not listen (within 10 s).
  bool start(ServeOptions o, const suite::Paths& paths, std::string* err);
  const std::string& socket() const { return o_.socket; }

 private:
  ServeOptions o_;
  suite::Paths paths_;
  std::atomic<bool> stop_{false};
  std::atomic<int> state_{0};  // 1: listening; 2: could not (why_)
  std::string why_;
  std::thread thread_;
};

}  // namespace eval
