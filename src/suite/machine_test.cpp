#include "suite/machine.h"

#include <doctest/doctest.h>

#include "suite/test_util.h"

using suite::test::TempDir;
using suite::test::write_file;

TEST_CASE("suite: default_h200 rates") {
  suite::Machine m = suite::default_h200();
  CHECK(m.link_gbps == 450);
  CHECK(m.link_effective_gbps == 370);
  CHECK(m.hbm_gbps == 4300);
  CHECK(m.bf16_tflops == 989);
  CHECK(m.fp32_tflops == 67);
  CHECK(m.gpus == 8);
  CHECK_FALSE(m.multicast);
}

TEST_CASE("suite: load_machine") {
  TempDir tmp;
  std::string f = tmp.path + "/m.json";
  write_file(f, R"({"name": "h100x4", "link_gbps": 450, "link_effective_gbps": 365,
                    "hbm_gbps": 3000, "fp32_tflops": 60, "bf16_tflops": 900, "gpus": 4,
                    "multicast": true})");
  suite::Machine m;
  std::string err;
  REQUIRE_MESSAGE(suite::load_machine(f, &m, &err), err);
  CHECK(m.name == "h100x4");
  CHECK(m.link_effective_gbps == 365);
  CHECK(m.hbm_gbps == 3000);
  CHECK(m.gpus == 4);
  CHECK(m.multicast);
  CHECK(m.fp8_tflops == 900);  // not given: the bf16 rate

  write_file(f, R"({"name": "x", "link_gbps": 450, "link_effective_gbps": 365, "hbm_gbps": 3000,
                    "fp32_tflops": 60, "bf16_tflops": 900, "gpus": 4, "hbm_gbs": 1})");
  CHECK_FALSE(suite::load_machine(f, &m, &err));
  CHECK(err.find(f + ": hbm_gbs: unknown key") != std::string::npos);

  write_file(f, R"({"name": "x", "link_gbps": 450, "hbm_gbps": 3000,
                    "fp32_tflops": 60, "bf16_tflops": 900, "gpus": 4})");
  CHECK_FALSE(suite::load_machine(f, &m, &err));
  CHECK(err.find("missing required key 'link_effective_gbps'") != std::string::npos);

  write_file(f, R"({"name": "x", "link_gbps": 0, "link_effective_gbps": 365, "hbm_gbps": 3000,
                    "fp32_tflops": 60, "bf16_tflops": 900, "gpus": 4})");
  CHECK_FALSE(suite::load_machine(f, &m, &err));
  CHECK(err.find("link_gbps: must be positive") != std::string::npos);

  write_file(f, "{ nope");
  CHECK_FALSE(suite::load_machine(f, &m, &err));
  CHECK(err.find(f) != std::string::npos);
}
