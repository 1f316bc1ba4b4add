// cli/pkb_serve.cpp: see pkb_serve.h.
#include "cli/pkb_serve.h"

#include <filesystem>

#include "eval/serve_client.h"
#include "sandbox/evaluate.h"
#include "sandbox/verdict_read.h"
#include "suite/paths.h"

namespace cli {

eval::ServeReply serve_pkb_eval(const eval::ServeRequest& r, pkb::WarmPool* pool,
                                const std::string& evals_dir) {
  eval::ServeReply reply;
  pkb::EvalSpec spec;
  try {
    spec = r.pkb.get<pkb::EvalSpec>();
  } catch (const std::exception& e) {
    reply.error = std::string("a PKB request that is not an eval: ") + e.what();
    return reply;
  }
  spec.warm = pool->interpreter_for(spec);
  const std::string under = spec.warm ? spec.warm->root() : evals_dir;
  spec.work_dir = sandbox::make_eval_dir(under);
  if (spec.work_dir.empty()) {
    reply.error = "the server cannot create a run directory under " + under;
    return reply;
  }
  sandbox::Verdict v;
  agent::SetupFault fault = agent::SetupFault::none;
  if (!pkb::evaluate(spec, &v, &reply.error, &fault)) {
    reply.fault = static_cast<int>(fault);
    return reply;
  }
  reply.ok = true;
  reply.verdict = sandbox::verdict_json(v);
  return reply;
}

Served evaluate_pkb_on_server(const std::string& socket, const pkb::EvalSpec& spec,
                              sandbox::Verdict* v, agent::SetupFault* fault, std::string* err) {
  eval::ServeRequest req;
  req.source_root = suite::default_paths().source_root;
  req.pkb = spec;
  req.pkb["work_dir"] = "";  // the server's
  eval::ServeReply reply;
  if (!eval::exchange(socket, req, &reply, err)) return Served::no;
  if (!reply.ok && reply.fault != 0) {
    if (fault) *fault = static_cast<agent::SetupFault>(reply.fault);
    *err = reply.error;
    return Served::fault;
  }
  if (!reply.ok) return (*err = socket + ": " + reply.error, Served::no);
  std::string why;
  if (!sandbox::verdict_from_json(reply.verdict, v, &why))
    return (*err = socket + ": its verdict: " + why, Served::no);
  return Served::verdict;
}

bool evaluate_served_first(const std::string& socket, const pkb::EvalSpec& spec, const OwnEval& own,
                           sandbox::Verdict* v, std::string* err, agent::SetupFault* fault) {
  std::string why;
  if (!socket.empty()) {
    switch (evaluate_pkb_on_server(socket, spec, v, fault, &why)) {
      case Served::verdict:
        return true;
      case Served::fault:
        return (*err = why, false);
      case Served::no:
        break;
    }
  }
  if (!own(v, err, fault)) return false;
  if (!socket.empty()) v->harness_notes.push_back("kforge serve (KFORGE_SERVE) not used: " + why);
  return true;
}

void serve_foreign_evals(agent::ForeignSuite* suite, const pkb::EvalSpec& base) {
  const std::string socket = eval::serve_socket_from_env();
  if (socket.empty()) return;
  pkb::EvalSpec sent = base;
  sent.warm.reset();
  auto own = suite->evaluate;
  suite->evaluate = [own, sent, socket](const std::string& file, sandbox::Verdict* v,
                                        std::string* e, agent::SetupFault* fault) {
    pkb::EvalSpec s = sent;
    s.solution = std::filesystem::absolute(file).string();
    auto local = [&](sandbox::Verdict* lv, std::string* le, agent::SetupFault* lf) {
      return own(file, lv, le, lf);
    };
    return evaluate_served_first(socket, s, local, v, e, fault);
  };
}

}  // namespace cli
