// suite/cost.cpp: the roofline and the bandwidth figures reported next to times.
#include "suite/cost.h"

#include <algorithm>

namespace suite {

double flops_rate(kf::DType t, const Machine& m) {
  switch (t) {
    case kf::DType::bf16:
    case kf::DType::f16:
      return m.bf16_tflops * 1e12;
    case kf::DType::e4m3:
    case kf::DType::e5m2:
      return m.fp8_tflops * 1e12;
    default:
      return m.fp32_tflops * 1e12;
  }
}

Roofline roofline(const Instance& inst, const Machine& m) {
  Roofline r;
  // One rank moves nothing over the interconnect, whatever the expression says.
  double comm = inst.world > 1 ? inst.comm_bytes : 0;
  if (m.link_gbps > 0) r.comm_ms = comm / (m.link_gbps * 1e9) * 1e3;
  if (m.hbm_gbps > 0) r.hbm_ms = inst.hbm_bytes / (m.hbm_gbps * 1e9) * 1e3;
  double rate = flops_rate(inst.compute_dtype, m);
  if (rate > 0) r.compute_ms = inst.flops / rate * 1e3;
  r.floor_ms = std::max({r.comm_ms, r.hbm_ms, r.compute_ms});
  if (r.floor_ms <= 0)
    r.bound = "none";
  else if (r.floor_ms == r.comm_ms)
    r.bound = "comm";
  else if (r.floor_ms == r.hbm_ms)
    r.bound = "hbm";
  else
    r.bound = "compute";
  return r;
}

double algbw_gbps(const Instance& inst, double time_ms) {
  if (!inst.has_busbw || !(time_ms > 0)) return 0;
  return inst.busbw_bytes / (time_ms * 1e-3) / 1e9;
}

double busbw_gbps(const Instance& inst, double time_ms) {
  return algbw_gbps(inst, time_ms) * inst.busbw_factor;
}

double pct_of_roofline(double floor_ms, double measured_ms) {
  if (!(measured_ms > 0) || !(floor_ms > 0)) return 0;
  return 100.0 * floor_ms / measured_ms;
}

}  // namespace suite
