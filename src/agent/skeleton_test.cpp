// The skeleton every prompt shows: it binds the problem's names, it builds, it loads and
// runs, and it is wrong (it computes nothing), for every problem.
#include "agent/skeleton.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "eval/eval.h"
#include "sandbox/build.h"
#include "suite/paths.h"
#include "tests/has.h"

namespace {

namespace fs = std::filesystem;

std::vector<suite::Problem> problems() {
  std::vector<suite::Problem> ps;
  std::string err;
  REQUIRE_MESSAGE(suite::load_all_problems(suite::default_paths().problems_dir, &ps, &err), err);
  REQUIRE(ps.size() >= 5);
  return ps;
}

eval::EvalConfig config(const suite::Problem& p, const std::string& backend) {
  eval::EvalConfig cfg;
  cfg.problem = p;
  cfg.paths = suite::default_paths();
  cfg.machine = suite::default_h200();
  REQUIRE(sandbox::parse_enum(backend, &cfg.settings.backend));
  cfg.settings.world = 2;
  cfg.settings.sizes = {"small"};
  cfg.settings.time = false;
  return cfg;
}

std::string write(const std::string& text, const std::string& name) {
  std::string dir = (fs::temp_directory_path() / "kforge_skeleton_test").string();
  fs::create_directories(dir);
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace

TEST_CASE("skeleton: binds every tensor and numeric parameter by name, and nothing of a kernel") {
  for (auto& p : problems()) {
    std::string cu = agent::kernel_skeleton(p, sandbox::Backend::cuda),
                cpp = agent::kernel_skeleton(p, sandbox::Backend::host);
    CHECK(has(cu, "#include <kf/kf.cuh>"));
    CHECK(has(cpp, "#include <kf/kf.h>"));
    for (auto* s : {&cu, &cpp}) {
      CHECK(has(*s, "extern \"C\" int kf_setup(kf::Comm& comm, kf::Tensors& t) {"));
      CHECK(has(*s, "extern \"C\" int kf_run(kf::Comm& comm, kf::Tensors& t) {"));
      CHECK(has(*s, "comm.peer(p, r)"));
      CHECK(has(*s, "TODO"));
      for (auto& t : p.tensors)
        CHECK_MESSAGE(has(*s, "= t[\"" + t.name + "\"];"), p.name << " " << t.name);
      CHECK_FALSE(has(*s, "<<<"));  // no kernel launch, no loop: nothing computed
      CHECK_FALSE(has(*s, "for ("));
    }
  }
  suite::Problem bc;
  for (auto& p : problems())
    if (p.name == "broadcast") bc = p;
  CHECK(has(agent::kernel_skeleton(bc, sandbox::Backend::cuda),
            "const int64_t root = t.iparam(\"root\");"));
  suite::Problem ar;
  for (auto& p : problems())
    if (p.name == "all_reduce") ar = p;
  CHECK(has(agent::kernel_skeleton(ar, sandbox::Backend::host),
            "const kf::Tensor& x = t[\"x\"];  // input, fp32 or bf16 (parameter dtype) [n]"));
}

TEST_CASE(
    "skeleton: the host skeleton builds, loads and runs on every problem, and is not correct") {
  for (auto& p : problems()) {
    eval::EvalConfig cfg = config(p, "host");
    sandbox::Verdict v;
    std::string err;
    REQUIRE_MESSAGE(
        eval::evaluate_file(
            cfg, write(agent::kernel_skeleton(p, sandbox::Backend::host), p.name + ".cpp"),
            sandbox::Role::candidate, &v, &err),
        err);
    CHECK_MESSAGE(v.status == sandbox::Status::mismatch, p.name << ": " << v.summary << "\n"
                                                                << v.log);
  }
}

TEST_CASE(
    "skeleton: the cuda skeleton passes the static checks and builds with nvcc on every problem") {
  for (auto& p : problems()) {
    eval::EvalConfig cfg = config(p, "cuda");
    std::string path = write(agent::kernel_skeleton(p, sandbox::Backend::cuda), p.name + ".cu"),
                err;
    sandbox::EvalRequest req;
    REQUIRE_MESSAGE(eval::make_request(cfg, path, sandbox::Role::candidate, &req, &err), err);
    sandbox::BuildResult b;
    REQUIRE_MESSAGE(sandbox::build_library(req.toolchain, path, sandbox::Role::candidate, &b, &err),
                    err);
    CHECK_MESSAGE(b.ok, p.name << ": " << b.summary() << "\n" << b.log);
  }
}
