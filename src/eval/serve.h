// eval/serve.h: `kforge serve`: warm ranks (sandbox/warm.h) kept by a process of their
// own, for the evals of other kforge commands (eval/serve_client.h: KFORGE_SERVE). It
// listens on a Unix socket (mode 0600; only this user's processes are answered, by their
// credentials), runs each request's eval as the client's own would run (the same
// sandbox::evaluate, the candidate in fresh runners with every protection) on a warm set
// of its pool, and answers with the verdict. Requests are served side by side; an eval
// slot (eval/eval_slot.h), which the client holds, keeps two off one GPU.
#pragma once

#include <functional>
#include <string>

#include "suite/paths.h"

namespace eval {

struct ServeOptions {
  std::string socket;  // the path to listen on
  int max_sets = 4;    // warm sets kept at once (each holds its ranks' device contexts)
};

// Serves until a signal asks this process to stop (sandbox/interrupt.h), then ends its
// sets and removes the socket. `on_ready` is called once it listens. False with *err when
// it cannot listen (the path is taken by a live server, or cannot be made).
bool serve_evals(const ServeOptions& o, const suite::Paths& paths,
                 const std::function<void()>& on_ready, std::string* err);

}  // namespace eval
