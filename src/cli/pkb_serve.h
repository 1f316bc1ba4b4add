// cli/pkb_serve.h: ParallelKernelBench evals through `kforge serve` (eval/serve.h). eval
// knows nothing of PKB; cli joins the two: the server hands a request that holds a PKB
// eval to serve_pkb_eval, which runs it on one of its warm interpreters (pkb/warm.h), and
// `kforge eval --suite pkb:...` and a PKB solve (a sweep's samples among them) send their
// evals to the server KFORGE_SERVE names first. So a sweep's samples share interpreters:
// python and torch start once per interpreter, not once per sample.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "agent/loop.h"
#include "agent/setup_fault.h"
#include "eval/serve_proto.h"
#include "pkb/evaluate.h"
#include "pkb/warm.h"

namespace cli {

// The server's side: r's PKB eval on an interpreter of `pool` (cold where every one is
// busy), its folder under the interpreter's root or under evals_dir.
eval::ServeReply serve_pkb_eval(const eval::ServeRequest& r, pkb::WarmPool* pool,
                                const std::string& evals_dir);

// How a client's eval went on the server.
enum class Served { verdict, fault, no };

// The client's side: spec (its solution, its options; the folder is the server's) on the
// server at `socket`. verdict: *v holds it; fault: the setup's (*fault, *err say which
// and why), as pkb::evaluate would have said it; no: not served (*err says why), and the
// caller evaluates on its own.
Served evaluate_pkb_on_server(const std::string& socket, const pkb::EvalSpec& spec,
                              sandbox::Verdict* v, agent::SetupFault* fault, std::string* err);

// As pkb::evaluate (false with *err, and *fault, when no verdict came): spec on the
// server at `socket` where one is named ("" for none) and serves it, else by `own`, whose
// verdict then says why the server was not used.
using OwnEval = std::function<bool(sandbox::Verdict*, std::string*, agent::SetupFault*)>;
bool evaluate_served_first(const std::string& socket, const pkb::EvalSpec& spec, const OwnEval& own,
                           sandbox::Verdict* v, std::string* err, agent::SetupFault* fault);

// Makes each of suite's evals go to KFORGE_SERVE's server first where one is named, and
// to the suite's own evaluate where it is not served (the verdict says why).
void serve_foreign_evals(agent::ForeignSuite* suite, const pkb::EvalSpec& base);

}  // namespace cli
