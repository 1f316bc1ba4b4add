// suite/analysis_text.cpp: the analysis the agent's prompt carries; the algorithm line is
// the problem's (search.json "advice"). Every number names its source: [PK] the
// ParallelKittens paper (notes/parallelkittens.md), [vLLM] and [NVLink] notes/comm.md §2
// and §5, [here] primitives/docs/choosing.md §4-5.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "suite/analysis.h"
#include "suite/cost.h"

namespace suite {

namespace {

std::string bytes_str(double b) {
  if (b >= 1 << 30) return fmt::format("{:.2f} GiB", b / (1 << 30));
  if (b >= 1 << 20) return fmt::format("{:.2f} MiB", b / (1 << 20));
  if (b >= 1 << 10) return fmt::format("{:.1f} KiB", b / (1 << 10));
  return fmt::format("{:.0f} B", b);
}

std::string us(double ms) {
  const double u = ms * 1e3;
  if (u < 1) return fmt::format("{:.3f} µs", u);
  return u < 10 ? fmt::format("{:.2f} µs", u) : fmt::format("{:.1f} µs", u);
}

// The problem's own line (search.json "advice"), its placeholders filled at `inst`.
void algorithm_advice(const Problem& p, const Instance& inst, std::string* o) {
  if (p.search.advice.empty()) return;
  std::string text, err;
  if (render_advice(p.search, inst, bytes_str, &text, &err))
    *o += "- " + text + "\n";
  else
    *o += fmt::format("- (no algorithm advice: {}: {})\n", p.search.file, err);
}

// The tensor the analysis sizes the problem by: the first input (x in the collectives).
const sandbox::JobTensor* first_input(const Instance& inst) {
  for (const sandbox::JobTensor& t : inst.tensors)
    if (!t.output) return &t;
  return nullptr;
}

}  // namespace

std::string analysis_text(const Problem& p, const Instance& inst, const Machine& m) {
  const CostConstants c;
  const Roofline roof = roofline(inst, m);
  const sandbox::JobTensor* in = first_input(inst);
  const std::string x = in ? in->name : "the input";
  const double S = in ? tensor_bytes(inst, in->name) : 0;
  const int w = inst.world;
  // A fused GEMM's model also has the math (search.json cost.flops).
  const bool gemm = std::any_of(p.search.families.begin(), p.search.families.end(),
                                [](const Family& f) { return !f.cost.flops.empty(); });
  std::string o = fmt::format(
      "Analysis ({}; cost model of ParallelKittens: T = T_launch + "
      "T_sync + max(T_comm, T_mem{}) [PK]):\n",
      instance_label(inst), gemm ? ", T_compute" : "");
  o += fmt::format(
      "- Bytes: {} is {} per rank. Per rank the problem must move {} over NVLink "
      "and {} through HBM (problem.json cost).\n",
      x, bytes_str(S), bytes_str(w > 1 ? inst.comm_bytes : 0), bytes_str(inst.hbm_bytes));
  o += fmt::format(
      "- Roofline floor: {} ({}-bound; NVLink {:.0f} GB/s per direction line rate, "
      "about {:.0f} GB/s effective [NVLink]; HBM {:.0f} GB/s).\n",
      us(roof.floor_ms), roof.bound, m.link_gbps, m.link_effective_gbps, m.hbm_gbps);
  const double fixed_ms = (c.launch_us + 2 * c.barrier_us) * 1e-3;
  const double data_ms = w > 1 ? inst.comm_bytes / (m.link_effective_gbps * 1e9) * 1e3 : 0;
  const char* regime = fixed_ms > 2 * data_ms   ? "latency-bound: launch and barriers dominate, "
                                                  "so use few blocks and the fewest barriers"
                       : data_ms > 2 * fixed_ms ? "bandwidth-bound: saturate the link"
                                                : "between latency and bandwidth";
  o += fmt::format(
      "- Regime: fixed cost ~{} (one launch ~{:.0f} µs + 2 barriers × {:.1f} µs, "
      "measured in-process on one H200 [here]; a cross-GPU flag round trip is about "
      "1-2 µs, not published [NVLink]) vs ~{} of data at the effective rate: {}.\n",
      us(fixed_ms), c.launch_us, c.barrier_us, us(data_ms), regime);
  std::string mech;
  if (S < 64 * 1024)
    mech = "register ops with 1-8 blocks (too little data for TMA or copy engines to pay)";
  else if (S < (1 << 20))
    mech = "register ops with 8-32 blocks; TMA only if the SMs are needed elsewhere";
  else if (S < c.ce_sat_bytes)
    mech = "TMA (few SMs, 16-byte aligned) or register ops with many blocks";
  else
    mech = "the copy engine or TMA";
  o += fmt::format(
      "- Mechanism: TMA saturates from {:.0f} KB messages with ~{:.0f} SMs ({:.0f} GB/s at 1 GB), "
      "register ops need ~{:.0f} SMs ({:.0f} GB/s), the copy engine reaches {:.0f} GB/s only with "
      "chunks >= 256 MB [PK] and costs ~{:.0f} µs a call [here]. At {} per rank: {}.\n",
      c.tma_min_msg / 1024, c.tma_sat_sms, c.tma_gbps, c.reg_sat_sms, c.reg_gbps, c.ce_gbps,
      c.ce_call_us, bytes_str(S), mech);
  algorithm_advice(p, inst, &o);
  o += "- Emulated ranks (processes time-sliced on one GPU) and the host backend do not measure "
       "speed: a cross-process flag round trip there is ~4 ms [here]; judge speed on real GPUs.\n";
  const std::vector<Template> space = template_space(p, inst, sandbox::Backend::cuda);
  if (!space.empty()) {
    const std::vector<Prediction> ranked = rank_templates(space, inst, m);
    const size_t shown = std::min<size_t>(ranked.size(), 6);
    o +=
        fmt::format("- Predicted (cost model, best {} of {} designs: mechanism/algorithm, grid):\n",
                    shown, ranked.size());
    for (size_t i = 0; i < shown; ++i) {
      const Prediction& r = ranked[i];
      if (!r.error.empty()) {
        o += fmt::format("    {:<44} no prediction: {}\n", r.tmpl.name(), r.error);
        continue;
      }
      o += fmt::format("    {:<44} {:>8} ({}-bound; {} block{} at {:.0f} GB/s)\n", r.tmpl.name(),
                       us(r.ms), r.bound, r.blocks, r.blocks == 1 ? "" : "s", r.bw_gbps);
    }
  }
  return o;
}

}  // namespace suite
