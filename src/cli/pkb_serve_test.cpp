// cli/pkb_serve_test.cpp: PKB evals through a server (eval::ServeThread, as `kforge serve`
// and a sweep run it) on its warm interpreters, with the tests' checkout and stand-in
// driver (pkb/test_util.h) under Debian's python3: the verdict comes back, a second eval
// reuses the interpreter, a setup fault comes back as the fault it is, and without a
// server the client is told so.
#include "cli/pkb_serve.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "eval/serve.h"
#include "pkb/test_util.h"
#include "sandbox/confine.h"
#include "suite/paths.h"
#include "suite/spec_json.h"

namespace fs = std::filesystem;

namespace {

struct ServedFixture {
  pkb::test::FakeCheckout f;
  pkb::EvalSpec spec;
  eval::ServeThread server;
  ServedFixture() {
    std::string err;
    REQUIRE_MESSAGE(pkb::test::stand_in_spec(f, &spec, &err), err);
    const std::string evals = f.root + "/evals";
    auto pool = std::make_shared<pkb::WarmPool>(evals, 2);
    eval::ServeOptions o;
    o.socket = f.root + "/serve.sock";
    o.evals_dir = evals;
    o.pkb = [pool, evals](const eval::ServeRequest& r) {
      return cli::serve_pkb_eval(r, pool.get(), evals);
    };
    REQUIRE_MESSAGE(server.start(o, suite::default_paths(), &err), err);
  }
  cli::Served eval(const std::string& body, sandbox::Verdict* v, agent::SetupFault* fault,
                   std::string* err) {
    spec.solution = f.root + "/candidate-" + std::to_string(++n) + ".py";
    pkb::test::write_candidate(spec.solution, body);
    return cli::evaluate_pkb_on_server(server.socket(), spec, v, fault, err);
  }
  int n = 0;
};

}  // namespace

TEST_CASE("pkb through kforge serve: the server's warm interpreter, one eval after another") {
  ServedFixture x;
  sandbox::Verdict v1, v2;
  agent::SetupFault fault = agent::SetupFault::none;
  std::string err;
  REQUIRE_MESSAGE(x.eval("", &v1, &fault, &err) == cli::Served::verdict, err);
  CHECK(v1.status == sandbox::Status::correct);
  CHECK(v1.speedup == doctest::Approx(2.0));
  CHECK(suite::spec_join(v1.harness_notes, "\n")
            .find("warm interpreter: eval 1 of " + x.f.root + "/evals/pkb/") != std::string::npos);
  REQUIRE_MESSAGE(x.eval("x = 1", &v2, &fault, &err) == cli::Served::verdict, err);
  CHECK(v2.status == sandbox::Status::correct);
  CHECK(suite::spec_join(v2.harness_notes, "\n").find("warm interpreter: eval 2 of") !=
        std::string::npos);
}

TEST_CASE("pkb through kforge serve: a setup fault is the answer; no server is no answer") {
  ServedFixture x;
  // A stand-in python whose every job and probe says this setup cannot run PKB.
  x.spec.python = x.f.root + "/python";
  x.f.write("python",
            "#!/bin/sh\nout=''\nwhile [ $# -gt 0 ]; do case \"$1\" in --out) out=\"$2\"; shift;; "
            "esac; shift; done\n[ -n \"$out\" ] || exit 2\nmkdir -p $out\n"
            "echo '{\"status\":\"environment\",\"message\":\"no CUDA here\",\"python\":\"sh\"}' > "
            "$out/probe.json\necho '{\"rank\":0,\"status\":\"environment\",\"message\":\"no CUDA "
            "here\"}' > $out/rank0.json\n");
  chmod(x.spec.python.c_str(), 0755);
  sandbox::Verdict v;
  agent::SetupFault fault = agent::SetupFault::none;
  std::string err;
  CHECK(x.eval("", &v, &fault, &err) == cli::Served::fault);
  CHECK(fault == agent::SetupFault::machine);
  CHECK(err.find("no CUDA here") != std::string::npos);

  err.clear();
  CHECK(cli::evaluate_pkb_on_server(x.f.root + "/nothing.sock", x.spec, &v, &fault, &err) ==
        cli::Served::no);
  CHECK(err.find("kforge serve") != std::string::npos);
}
