// eval/serve_client.h: evals on a running `kforge serve` (eval/serve.h). With
// KFORGE_SERVE=SOCKET in the environment (kforge sweep sets it for its samples when it
// starts a server of its own), the evals of `eval`, `solve` and `tune` go to the server,
// whose warm ranks outlive any one command: a script's or CI's evals, one after
// another, and a sweep's samples of one problem share a set. The client builds the
// libraries first, in its own build cache (so its compile overlaps other evals), then
// sends the eval. Where the server cannot serve it (nothing listens, another checkout,
// the connection broke), the caller evaluates on ranks of its own and says so.
#pragma once

#include <string>

#include "eval/serve_proto.h"
#include "sandbox/evaluate.h"
#include "sandbox/verdict.h"

namespace eval {

// The socket KFORGE_SERVE names; "" when unset or empty.
std::string serve_socket_from_env();

// A connected Unix stream socket to `path`; -1 with *err naming it.
int connect_unix(const std::string& path, std::string* err);

// One request to the server at `socket` and its reply. False with *err when no reply
// came (nothing listens, the connection broke, an answer that is not kforge serve's).
bool exchange(const std::string& socket, const ServeRequest& request, ServeReply* reply,
              std::string* err);

// Evaluates req on the server at `socket` into *v. False with *err when it was not
// served there.
bool evaluate_on_server(const std::string& socket, const sandbox::EvalRequest& req,
                        const std::string& source_root, sandbox::Verdict* v, std::string* err);

}  // namespace eval
