// suite/machine.cpp: the H200 defaults and machine description files.
#include "suite/machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "sandbox/job.h"

namespace suite {

Machine default_h200() {
  Machine m;
  m.name = "h200x8";
  // NVLink 4: 450 GB/s per direction is the line rate (900 GB/s is both directions
  // added); NCCL's ring reaches about 370 GB/s busbw per direction (nccl-tests#212,
  // nccl#1442; /work/shared/notes/comm.md sections 1 and 5). A copy engine moved
  // 368.8 GB/s on H100 in ParallelKittens' 1 GB test (notes/parallelkittens.md).
  m.link_gbps = 450;
  m.link_effective_gbps = 370;
  // HBM3e: 4.8 TB/s on the datasheet; a device-to-device copy measured about 4.3 TB/s
  // on one H200 of the GPU machine. The roofline uses the measured rate.
  m.hbm_gbps = 4300;
  // H200 SXM datasheet, dense (without sparsity): bf16/fp16 tensor core 989 TFLOP/s,
  // fp8 1979 TFLOP/s, fp32 67 TFLOP/s.
  m.fp32_tflops = 67;
  m.bf16_tflops = 989;
  m.fp8_tflops = 1979;
  m.gpus = 8;
  // NVLink multicast is off on the machines the project is tested on (NCCL_NVLS_ENABLE=0).
  m.multicast = false;
  return m;
}

bool load_machine(const std::string& json_path, Machine* out, std::string* err) {
  nlohmann::json j;
  if (!sandbox::read_json_file(json_path, &j, err)) return false;
  auto fail = [&](const std::string& key, const std::string& msg) {
    *err = json_path + ": " + (key.empty() ? "" : key + ": ") + msg;
    return false;
  };
  if (!j.is_object()) return fail("", "expected a JSON object describing the machine");
  const std::vector<std::string> required = {
      "name", "link_gbps", "link_effective_gbps", "hbm_gbps", "fp32_tflops", "bf16_tflops", "gpus"};
  const std::vector<std::string> optional = {"fp8_tflops", "multicast"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(required.begin(), required.end(), it.key()) == required.end() &&
        std::find(optional.begin(), optional.end(), it.key()) == optional.end()) {
      std::string all;
      for (auto* v : {&required, &optional})
        for (const std::string& k : *v) all += (all.empty() ? "" : ", ") + k;
      return fail(it.key(), "unknown key; the keys are: " + all);
    }
  for (const std::string& k : required)
    if (!j.contains(k)) return fail("", "missing required key '" + k + "'; add it");
  Machine m;
  if (!j["name"].is_string() || j["name"].get<std::string>().empty())
    return fail("name", "expected a non-empty string");
  m.name = j["name"].get<std::string>();
  auto rate = [&](const char* key, double* v) {
    const auto& x = j[key];
    if (!x.is_number()) return fail(key, fmt::format("expected a number, got {}", x.type_name()));
    *v = x.get<double>();
    if (!(*v > 0)) return fail(key, "must be positive");
    return true;
  };
  if (!rate("link_gbps", &m.link_gbps) || !rate("link_effective_gbps", &m.link_effective_gbps) ||
      !rate("hbm_gbps", &m.hbm_gbps) || !rate("fp32_tflops", &m.fp32_tflops) ||
      !rate("bf16_tflops", &m.bf16_tflops))
    return false;
  // Without an fp8 rate, fp8 is taken to run at the bf16 rate (not every GPU has fp8
  // tensor cores); a file for a GPU that does should give fp8_tflops.
  m.fp8_tflops = m.bf16_tflops;
  if (j.contains("fp8_tflops") && !rate("fp8_tflops", &m.fp8_tflops)) return false;
  if (!j["gpus"].is_number_integer() || j["gpus"].get<int>() < 1)
    return fail("gpus", "expected a positive integer");
  m.gpus = j["gpus"].get<int>();
  if (j.contains("multicast")) {
    if (!j["multicast"].is_boolean()) return fail("multicast", "expected true or false");
    m.multicast = j["multicast"].get<bool>();
  }
  *out = m;
  return true;
}

}  // namespace suite
