// suite/machine.h: the rates of the machine a roofline is drawn for. The defaults are one
// H200 node with NVLink 4; a JSON file describes any other.
#pragma once

#include <string>

namespace suite {

struct Machine {
  std::string name;
  double link_gbps = 0;            // NVLink per GPU, per direction, line rate (GB/s, 1e9 B)
  double link_effective_gbps = 0;  // what NCCL's ring reaches per direction (GB/s)
  double hbm_gbps = 0;             // HBM bandwidth per GPU (GB/s)
  double fp32_tflops = 0;          // dense, per GPU
  double bf16_tflops = 0;          // dense tensor-core bf16/fp16, per GPU
  double fp8_tflops = 0;           // dense tensor-core fp8, per GPU
  int gpus = 0;                    // GPUs in the node
  bool multicast = false;          // NVLink SHARP multicast usable (off on our machines)
};

// Eight H200 SXM on NVLink 4, multicast off (DESIGN.md, "Policies on these machines").
Machine default_h200();

// Reads a machine description: a JSON object with every field above (multicast and
// fp8_tflops optional), e.g. {"name": "h100x8", "link_gbps": 450, ...}. Unknown keys,
// missing keys and non-positive rates are errors naming the file and the key.
bool load_machine(const std::string& json_path, Machine* out, std::string* err);

}  // namespace suite
