// suite/analysis.h: the cost model of ParallelKittens (T = T_launch + T_sync +
// max(T_comm, T_mem) + T_non-overlap, each term bytes over a rate) applied to the
// expert kernels' templates, and the short analysis the agent's prompt carries: the
// bytes that must move, the roofline floor, the latency/bandwidth regime, what the
// numbers favour and each template's predicted time, every number with its source
// (/work/shared/notes/parallelkittens.md, comm.md, primitives/docs/choosing.md).
#pragma once

#include <string>
#include <vector>

#include "suite/instance.h"
#include "suite/machine.h"
#include "suite/problem.h"
#include "suite/templates.h"

namespace suite {

// A GEMM family (search.json cost.flops) adds T_compute: fused, T = T_launch + T_sync +
// max(T_comm, T_mem, T_compute); unfused (overlap false), the GEMM runs first:
// T = T_launch + T_sync + T_compute + max(T_comm, T_mem).
// The model's constants. Defaults: H100/H200 NVLink 4 (choosing.md; PK paper).
struct CostConstants {
  double launch_us = 5.0;     // a kernel launch back to back (choosing.md §5: 4.3-6.7 µs)
  double barrier_us = 2.5;    // kf::barrier, measured in-process on one H200 (§5)
  double hop_us = 0.75;       // one NVLink traversal: half a 1-2 µs flag round trip [assumed]
  double ce_call_us = 5.0;    // one cudaMemcpyAsync back to back (§5: 5.0-5.3 µs)
  double reg_gbps = 342.68;   // register ops, 1 GB, all SMs [PK, H100]
  double tma_gbps = 350.01;   // TMA [PK]
  double ce_gbps = 368.82;    // copy engine [PK]
  double reg_sat_sms = 76;    // SMs register ops need to saturate [PK]
  double tma_sat_sms = 15;    // SMs TMA needs [PK]
  double tma_min_msg = 2048;  // TMA saturates from 2 KB messages [PK]
  double ce_sat_bytes = 256.0 * (1 << 20);  // copy-engine chunks to saturate [PK]
  double full_threads = 512;  // threads per block the SM counts above assume [assumed]
  double gpu_sms = 132;       // SMs of an H100/H200 SXM: a GEMM on fewer gets that share
};

struct Prediction {
  Template tmpl;
  double ms = 0;  // the prediction
  int kernels = 0, barriers = 0, ce_calls = 0, hops = 0;
  int blocks = 0;         // blocks the kernel would launch (grid_for over the work)
  double comm_bytes = 0;  // over the busiest link direction of one rank
  double hbm_bytes = 0;   // one rank's HBM traffic
  double bw_gbps = 0;     // the mechanism's achievable rate at these blocks/chunks
  double launch_ms = 0, sync_ms = 0, comm_ms = 0, mem_ms = 0;
  double compute_ms = 0;  // a GEMM family's flops at its blocks' share of the bf16 rate
  std::string bound;      // latency | comm | hbm | compute | error
  std::string error;      // why no prediction could be made (ms is then infinite)
};

Prediction predict(const Template& t, const Instance& inst, const Machine& m,
                   const CostConstants& c = CostConstants());
double predict_ms(const Template& t, const Instance& inst, const Machine& m);

// Every template's prediction, fastest first (those in error last); ties: fewer blocks,
// then fewer threads, then the space's order.
std::vector<Prediction> rank_templates(const std::vector<Template>& space, const Instance& inst,
                                       const Machine& m, const CostConstants& c = CostConstants());

// The analysis for the prompt (plain text, ~30 lines): bytes, floor and bound, regime,
// mechanism advice with numbers and sources, the problem's algorithm advice (search.json)
// and the CUDA templates' predictions. Emulated or host timings are not speeds: the text
// says so.
std::string analysis_text(const Problem& p, const Instance& inst, const Machine& m);

}  // namespace suite
