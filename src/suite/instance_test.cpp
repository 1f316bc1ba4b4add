#include "suite/instance.h"

#include <doctest/doctest.h>

#include "suite/test_util.h"
#include "tests/has.h"

using suite::test::all_reduce_json;
using suite::test::TempDir;
using suite::test::write_problem;
using ojson = nlohmann::ordered_json;

namespace {

suite::Problem load(const TempDir& tmp, const ojson& j) {
  std::string dir = write_problem(tmp.path, j["name"].get<std::string>(), j.dump());
  suite::Problem p;
  std::string err;
  REQUIRE_MESSAGE(suite::load_problem(dir, &p, &err), err);
  return p;
}

// A problem whose shapes depend on the rank: rank r holds r + 1 rows of n.
ojson ragged_json() {
  return ojson::parse(R"({
  "name": "ragged_gather",
  "category": "other",
  "description": "Gather ragged rows.",
  "params": {"n": {"type": "int", "default": 8}, "scale": {"type": "float", "default": 0.5},
             "mode": {"type": "string", "default": "fast", "choices": ["fast", "slow"]}},
  "sizes": {"small": {"n": 4}, "full": {"n": 1024, "scale": 2}},
  "world": {"min": 1, "max": 8},
  "constraints": ["n % 2 == 0", "n >= world"],
  "tensors": [
    {"name": "x", "role": "in", "dtype": "bf16", "shape": ["rank + 1", "n"],
     "init": {"dist": "int", "lo": 0, "hi": "n - 1"}},
    {"name": "idx", "role": "in", "dtype": "int32", "shape": [],
     "init": {"dist": "normal", "mean": "scale", "std": 2}},
    {"name": "y", "role": "out", "dtype": "fp32", "shape": ["world * (world + 1) / 2", "n"]}
  ],
  "tolerance": {"fp32": {"atol": 0, "rtol": 0}},
  "cost": {"comm_bytes": "(world - 1) * x_bytes", "hbm_bytes": "x_bytes + y_bytes",
           "flops": 0}
})");
}

}  // namespace

TEST_CASE("suite: resolve_instance of the README all_reduce") {
  TempDir tmp;
  suite::Problem p = load(tmp, all_reduce_json());
  suite::Instance inst;
  std::string err;
  REQUIRE_MESSAGE(suite::resolve_instance(p, 2, "small", {}, &inst, &err), err);
  CHECK(inst.problem == "all_reduce");
  CHECK(inst.size == "small");
  CHECK(inst.world == 2);
  CHECK(inst.params == std::map<std::string, double>{{"n", 4099}});
  CHECK(inst.str_params == std::map<std::string, std::string>{{"dtype", "fp32"}});
  REQUIRE(inst.tensors.size() == 2);
  const sandbox::JobTensor& x = inst.tensors[0];
  const sandbox::JobTensor& y = inst.tensors[1];
  CHECK(x.name == "x");
  CHECK_FALSE(x.output);
  CHECK(x.dtype == kf::DType::f32);
  CHECK(x.shape_by_rank == std::vector<std::vector<int64_t>>{{4099}, {4099}});
  CHECK(x.init.dist == "uniform");
  CHECK(x.init.a == -1);
  CHECK(x.init.b == 1);
  CHECK(y.output);
  CHECK(y.atol == 1e-5);
  CHECK(y.rtol == 1e-5);
  CHECK(inst.workspace_bytes == 64ull << 20);
  CHECK(inst.comm_bytes == 4099 * 4);  // 2 * (2 - 1) / 2 * x_bytes
  CHECK(inst.hbm_bytes == 3 * 4099 * 4);
  CHECK(inst.flops == 4099);
  CHECK(inst.has_busbw);
  CHECK(inst.busbw_bytes == 4099 * 4);
  CHECK(inst.busbw_factor == 1);
  CHECK(inst.compute_dtype == kf::DType::f32);
  CHECK(suite::instance_label(inst) == "all_reduce small world=2 dtype=fp32 n=4099");
}

TEST_CASE("suite: resolve_instance overrides") {
  TempDir tmp;
  suite::Problem p = load(tmp, all_reduce_json());
  suite::Instance inst;
  std::string err;
  // dtype override picks the bf16 tolerance, the element size and dsize-free costs follow.
  REQUIRE_MESSAGE(
      suite::resolve_instance(p, 4, "full", {"dtype=bfloat16", "n = 2^10"}, &inst, &err), err);
  CHECK(inst.str_params.at("dtype") == "bf16");
  CHECK(inst.params.at("n") == 1024);
  CHECK(inst.tensors[0].dtype == kf::DType::bf16);
  CHECK(inst.tensors[1].dtype == kf::DType::bf16);
  CHECK(inst.tensors[1].atol == 0.05);
  CHECK(inst.tensors[1].rtol == 0.02);
  CHECK(inst.busbw_bytes == 2048);
  CHECK(inst.compute_dtype == kf::DType::bf16);

  CHECK_FALSE(suite::resolve_instance(p, 2, "small", {"m=3"}, &inst, &err));
  check_has(err, "no parameter 'm'; the parameters are: n, dtype");
  CHECK_FALSE(suite::resolve_instance(p, 2, "small", {"dtype=fp16"}, &inst, &err));
  check_has(err, "fp16 is not a choice of dtype; the choices are: fp32, bf16");
  CHECK_FALSE(suite::resolve_instance(p, 2, "small", {"dtype=fp99"}, &inst, &err));
  check_has(err, "'fp99' is not a dtype");
  CHECK_FALSE(suite::resolve_instance(p, 2, "small", {"n=4.5"}, &inst, &err));
  check_has(err, "n is int but 4.5 is not an integer");
  CHECK_FALSE(suite::resolve_instance(p, 2, "small", {"n=lots"}, &inst, &err));
  check_has(err, "override 'n=lots'");
  CHECK_FALSE(suite::resolve_instance(p, 2, "small", {"n"}, &inst, &err));
  check_has(err, "not PARAM=VALUE");
  CHECK_FALSE(suite::resolve_instance(p, 2, "medium", {}, &inst, &err));
  check_has(err, "no size 'medium'; the sizes are: small, full");
}

TEST_CASE("suite: resolve_instance with rank-dependent shapes") {
  TempDir tmp;
  suite::Problem p = load(tmp, ragged_json());
  suite::Instance inst;
  std::string err;
  REQUIRE_MESSAGE(suite::resolve_instance(p, 4, "small", {"mode=slow"}, &inst, &err), err);
  const sandbox::JobTensor& x = inst.tensors[0];
  CHECK(x.shape_by_rank == std::vector<std::vector<int64_t>>{{1, 4}, {2, 4}, {3, 4}, {4, 4}});
  CHECK(x.init.dist == "int");
  CHECK(x.init.a == 0);
  CHECK(x.init.b == 3);  // "n - 1"
  const sandbox::JobTensor& idx = inst.tensors[1];
  CHECK(idx.dtype == kf::DType::i32);
  CHECK(idx.shape_by_rank == std::vector<std::vector<int64_t>>{{}, {}, {}, {}});
  CHECK(idx.init.dist == "normal");
  CHECK(idx.init.a == 0.5);  // mean = scale
  CHECK(idx.init.b == 2);
  CHECK(inst.tensors[2].shape_by_rank[3] == std::vector<int64_t>{10, 4});
  // cost uses rank 0's bytes: x is 1 x 4 bf16 = 8 bytes
  CHECK(inst.comm_bytes == 3 * 8);
  CHECK(inst.hbm_bytes == 8 + 10 * 4 * 4);
  CHECK(inst.params == std::map<std::string, double>{{"n", 4}, {"scale", 0.5}});
  CHECK(inst.str_params == std::map<std::string, std::string>{{"mode", "slow"}});
  CHECK_FALSE(inst.has_busbw);
  CHECK(inst.compute_dtype == kf::DType::f32);  // no dtype parameter: the first output's

  REQUIRE(suite::resolve_instance(p, 1, "full", {}, &inst, &err));
  CHECK(inst.params.at("scale") == 2);
  CHECK(inst.tensors[1].init.a == 2);
}

TEST_CASE("suite: resolve_instance reports constraint and world failures") {
  TempDir tmp;
  suite::Problem p = load(tmp, ragged_json());
  suite::Instance inst;
  std::string err;
  bool unsat = false;
  CHECK_FALSE(suite::resolve_instance(p, 2, "small", {"n=5"}, &inst, &err, &unsat));
  CHECK(unsat);
  check_has(err, "constraint \"n % 2 == 0\" fails for n=5");
  check_has(err, "constraints[0]");
  CHECK_FALSE(suite::resolve_instance(p, 8, "small", {}, &inst, &err, &unsat));
  CHECK(unsat);
  check_has(err, "constraint \"n >= world\" fails for n=4, world=8");
  CHECK_FALSE(suite::resolve_instance(p, 9, "small", {}, &inst, &err, &unsat));
  CHECK(unsat);
  check_has(err, "world 9 is outside the world sizes the problem supports, 1..8");
  CHECK_FALSE(suite::resolve_instance(p, 2, "small", {"n=x"}, &inst, &err, &unsat));
  CHECK_FALSE(unsat);  // a bad override is not an unsatisfied constraint
}

TEST_CASE("suite: apply_instance fills the job") {
  TempDir tmp;
  suite::Problem p = load(tmp, all_reduce_json());
  suite::Instance inst;
  std::string err;
  REQUIRE(suite::resolve_instance(p, 3, "small", {"dtype=bf16"}, &inst, &err));
  sandbox::Job job;
  job.settings.seed = 7;
  suite::apply_instance(inst, &job);
  CHECK(job.size == "small");
  CHECK(job.params.at("n") == 4099);
  CHECK(job.str_params.at("dtype") == "bf16");
  REQUIRE(job.tensors.size() == 2);
  CHECK(job.tensors[0].shape_by_rank.size() == 3);
  CHECK(job.workspace_bytes == 64ull << 20);
  CHECK(job.settings.seed == 7);  // the settings are not the instance's to change
}
