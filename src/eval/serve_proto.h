// eval/serve_proto.h: what `kforge serve` (eval/serve.h) and the commands that use it
// (eval/serve_client.h) say over its Unix socket: one JSON line each way, then the
// connection ends.
//
// The request is an eval as the client resolved it (eval::make_request: the problem's
// sizes, the settings block, the roofline of the client's machine); the server adds its
// own toolchain and launch options, so that the programs it runs (nvcc, mpirun, the
// ranks) are its own, never ones a request names. It serves one checkout: a request from
// another (source_root) is refused, and the client evaluates on its own ranks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sandbox/evaluate.h"

namespace eval {

constexpr int kServeProtocol = 1;

struct ServeRequest {
  int protocol = kServeProtocol;
  std::string source_root;  // the client's checkout
  sandbox::Settings settings;
  sandbox::Role role = sandbox::Role::candidate;
  std::string candidate, baseline, problem_dir;
  std::string cache_dir;  // the client's build cache: it built the libraries there first
  std::vector<sandbox::Instance> instances;
  // A ParallelKernelBench eval instead (pkb::EvalSpec's JSON, src/pkb/evaluate.h): eval
  // knows nothing of PKB, so the server hands it to ServeOptions::pkb (cli wires it).
  nlohmann::json pkb;
};

struct ServeReply {
  bool ok = false;
  std::string error;       // when !ok: why it was not served
  nlohmann::json verdict;  // when ok: sandbox::verdict_json's, read by verdict_from_json
  // A PKB eval that got no verdict because of the setup (agent::SetupFault, not none):
  // the answer itself, not a server that failed; the client reports it as its own would.
  int fault = 0;
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ServeRequest, protocol, source_root, settings, role,
                                                candidate, baseline, problem_dir, cache_dir,
                                                instances, pkb)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ServeReply, ok, error, verdict, fault)

// The request for `req` (a client's), and back (the server's: toolchain and launch
// options left at their defaults for the server to fill).
ServeRequest serve_request(const sandbox::EvalRequest& req, const std::string& source_root);
sandbox::EvalRequest eval_request(const ServeRequest& r);

// One line over a connected socket, and one back (at most 64 MiB). False with *err when
// the peer went away or sent no full line within timeout_s (<= 0: no limit); a wait for
// a line ends early, false, when this process is told to stop (a signal or its deadline:
// sandbox/deadline.h).
bool send_line(int fd, const std::string& line, std::string* err);
bool receive_line(int fd, double timeout_s, std::string* line, std::string* err);

}  // namespace eval
