// suite/cost.h: the roofline of an instance on a machine, and nccl-tests' bandwidths.
#pragma once

#include <string>

#include "suite/instance.h"
#include "suite/machine.h"

namespace suite {

struct Roofline {
  double comm_ms = 0;     // comm_bytes over the link's line rate (0 at world 1)
  double hbm_ms = 0;      // hbm_bytes over the HBM rate
  double compute_ms = 0;  // flops over the rate of the instance's compute dtype
  double floor_ms = 0;    // the largest of the three: no kernel can be faster
  std::string bound;      // "comm" | "hbm" | "compute" | "none" (all three zero)
};

// The rate FLOPs of `t` run at on `m`, in FLOP/s: bf16/fp16 at bf16_tflops, fp8 at
// fp8_tflops, everything else (fp32, fp64, integers) at fp32_tflops.
double flops_rate(kf::DType t, const Machine& m);

Roofline roofline(const Instance& inst, const Machine& m);

// nccl-tests (doc/PERFORMANCE.md): algbw = bytes / time, busbw = algbw * factor, in GB/s
// (1e9 bytes). 0 when the instance declares no busbw or time_ms is not positive.
double algbw_gbps(const Instance& inst, double time_ms);
double busbw_gbps(const Instance& inst, double time_ms);

// 100 * floor / measured: how close a measured time is to the roofline (0 if unknown).
double pct_of_roofline(double floor_ms, double measured_ms);

}  // namespace suite
