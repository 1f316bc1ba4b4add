// suite/analysis.cpp: per-template predictions of the PK cost model. The model is generic;
// what is particular to a problem (the bytes each family moves, its work, hops and copy
// calls) comes from the family's terms in the problem's search.json.
#include "suite/analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "suite/cost.h"

namespace suite {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// kf::grid_for: the blocks a grid-stride kernel launches over `work` 16-byte vectors.
int grid_for(int64_t work, int threads, int max_blocks) {
  int64_t b = ceil_div(std::max<int64_t>(work, 1), threads);
  return static_cast<int>(std::min<int64_t>(b, max_blocks));
}

// The achievable link rate of a mechanism, from PK's 1 GB all-SM numbers scaled by the
// share of the SMs it needs to saturate (TMA ~15, registers ~76) and, for TMA, by the
// message size below 2 KB; copy engines ramp with the chunk, 90% at 256 MB.
double mech_gbps(Mech mech, int blocks, int threads, double msg_bytes, const Machine& m,
                 const CostConstants& c) {
  double bw = 0;
  if (mech == Mech::tma) {
    bw = c.tma_gbps * std::min(1.0, blocks / c.tma_sat_sms) *
         std::min(1.0, msg_bytes / c.tma_min_msg);
  } else if (mech == Mech::ce) {
    const double half = c.ce_sat_bytes / 9;  // s/(s+half) = 0.9 at the saturating chunk
    bw = c.ce_gbps * msg_bytes / (msg_bytes + half);
  } else {  // reg, host
    const double sms = blocks * std::min(1.0, threads / c.full_threads);
    bw = c.reg_gbps * std::min(1.0, sms / c.reg_sat_sms);
  }
  return m.link_gbps > 0 ? std::min(bw, m.link_gbps) : bw;
}

// A prediction that could not be made: last in a ranking, with the reason.
Prediction failed(const Template& t, const std::string& err) {
  Prediction p;
  p.tmpl = t;
  p.ms = std::numeric_limits<double>::infinity();
  p.bound = "error";
  p.error = fmt::format("{} {}: {}", t.problem, t.name(), err);
  return p;
}

// Kernels, barriers, copy-engine calls and the blocks launched, by mechanism.
void launch_shape(Mech mech, const TermValues& v, int64_t tile, int threads, int max_blocks,
                  Prediction* p) {
  p->kernels = mech == Mech::ce ? 2 : 1;  // ce: the barrier kernels around the copies
  p->barriers = 2;
  if (mech == Mech::ce) {
    p->ce_calls = static_cast<int>(v.ce_calls);
    p->blocks = 1;
    return;
  }
  const int64_t work = static_cast<int64_t>(v.work);
  if (mech == Mech::tma) {  // one block per tile of the work, else the register tail's grid
    const int64_t tiles = work * 16 / std::max<int64_t>(tile, 16);
    p->blocks = tiles > 0 ? static_cast<int>(std::min<int64_t>(tiles, max_blocks))
                          : grid_for(work, threads, max_blocks);
    return;
  }
  p->blocks = grid_for(work, threads, max_blocks);
}

// The times of the data terms and the total, from p's bytes, rate and compute time.
void finish(const Machine& m, const CostConstants& c, bool overlap, Prediction* p) {
  p->launch_ms = (p->kernels * c.launch_us + p->ce_calls * c.ce_call_us) * 1e-3;
  p->sync_ms = (p->barriers * c.barrier_us + p->hops * c.hop_us) * 1e-3;
  p->comm_ms = p->comm_bytes > 0 && p->bw_gbps > 0 ? p->comm_bytes / (p->bw_gbps * 1e9) * 1e3 : 0;
  p->mem_ms = m.hbm_gbps > 0 ? p->hbm_bytes / (m.hbm_gbps * 1e9) * 1e3 : 0;
  const double data_ms = overlap ? std::max({p->comm_ms, p->mem_ms, p->compute_ms})
                                 : p->compute_ms + std::max(p->comm_ms, p->mem_ms);
  p->ms = p->launch_ms + p->sync_ms + data_ms;
  if (p->launch_ms + p->sync_ms >= data_ms)
    p->bound = "latency";
  else if (p->compute_ms >= std::max(p->comm_ms, p->mem_ms))
    p->bound = "compute";
  else
    p->bound = p->comm_ms >= p->mem_ms ? "comm" : "hbm";
}

// A GEMM family: the tiles keep min(tiles, blocks - comm_blocks) blocks computing, at
// their share of the tensor-core rate; the bytes move from the comm_blocks blocks of an
// inter-SM schedule, else from every computing block (intra-SM: a tile's producer sends
// it). One kernel when fused; the unfused GEMM and collective are two.
Prediction predict_gemm(const Template& t, Mech mech, const TermValues& v, const Instance& inst,
                        const Machine& m, const CostConstants& c) {
  const KnobValues k = t.knobs();
  auto knob = [&](Knob x) { return k.count(x) ? k.at(x) : int64_t{0}; };
  Prediction p;
  p.tmpl = t;
  const int w = std::max(inst.world, 1);
  p.comm_bytes = w == 1 ? 0 : v.comm_bytes;
  p.hbm_bytes = v.hbm_bytes;
  p.hops = w == 1 ? 0 : static_cast<int>(v.hops);
  p.kernels = t.model.overlap ? 1 : 2;
  p.barriers = t.model.overlap ? 1 : 2;  // the fused kernels have one (slots or signals)
  const int64_t comm = w == 1 ? 0 : knob(Knob::comm_blocks);
  // A host source that launches no grid computes as a full GPU would (see predict).
  const int64_t grid = mech == Mech::host && knob(Knob::blocks) <= 0
                           ? static_cast<int64_t>(c.gpu_sms)
                           : knob(Knob::blocks);
  const int64_t compute =
      std::max<int64_t>(1, std::min<int64_t>(static_cast<int64_t>(v.tiles), grid - comm));
  p.blocks = static_cast<int>(compute + comm);
  const double msg = !t.model.cost.msg_bytes.empty() ? v.msg_bytes : knob(Knob::chunk_bytes);
  p.bw_gbps = mech_gbps(mech, static_cast<int>(comm > 0 ? comm : compute),
                        static_cast<int>(c.full_threads), msg, m, c);
  const double rate = flops_rate(inst.compute_dtype, m) * std::min(1.0, compute / c.gpu_sms);
  p.compute_ms = rate > 0 ? v.flops / rate * 1e3 : 0;
  finish(m, c, t.model.overlap, &p);
  return p;
}

}  // namespace

Prediction predict(const Template& t, const Instance& inst, const Machine& m,
                   const CostConstants& c) {
  Mech mech;
  if (!parse_mech(t.mech, &mech)) return failed(t, "unknown mechanism \"" + t.mech + "\"");
  const TemplateModel& tm = t.model;
  TermValues v;
  std::string err;
  if (!eval_terms(tm.cost, tm.fallback_when, t.algo, inst, t.knobs(), &v, &err))
    return failed(t, err);
  if (v.fallback) mech = tm.fallback_mech;  // e.g. unaligned TMA chunks: the register path
  if (!tm.cost.flops.empty()) return predict_gemm(t, mech, v, inst, m, c);
  int threads = t.threads > 0 ? t.threads : tm.default_threads;
  int max_blocks = t.blocks > 0 ? t.blocks : tm.default_blocks;
  if (mech == Mech::host && (threads <= 0 || max_blocks <= 0)) {
    // A host source that launches no grid (a host-only problem's) moves its bytes at the
    // rate a saturating grid would: the model then ranks it by its bytes and hops alone.
    threads = static_cast<int>(c.full_threads);
    max_blocks = static_cast<int>(c.reg_sat_sms);
  }
  // A template made by hand, not by template_space, has no model to predict with.
  if (mech == Mech::ce ? tm.cost.msg_bytes.empty()
                       : tm.cost.work.empty() || threads <= 0 || max_blocks <= 0)
    return failed(t,
                  "no cost model (a template from template_space has its family's "
                  "search.json terms)");
  Prediction p;
  p.tmpl = t;
  const int w = std::max(inst.world, 1);
  p.comm_bytes = w == 1 ? 0 : v.comm_bytes;
  p.hbm_bytes = v.hbm_bytes;
  p.hops = w == 1 ? 0 : static_cast<int>(v.hops);
  const int64_t tile = t.chunk > 0 ? t.chunk : tm.default_chunk_bytes;
  launch_shape(mech, v, tile, threads, max_blocks, &p);
  // bytes per transfer: the TMA tile, or one copy-engine call
  const double msg = mech == Mech::tma ? static_cast<double>(tile) : v.msg_bytes;
  p.bw_gbps = mech_gbps(mech, p.blocks, threads, msg, m, c);
  finish(m, c, true, &p);
  return p;
}

double predict_ms(const Template& t, const Instance& inst, const Machine& m) {
  return predict(t, inst, m).ms;
}

std::vector<Prediction> rank_templates(const std::vector<Template>& space, const Instance& inst,
                                       const Machine& m, const CostConstants& c) {
  std::vector<Prediction> out;
  for (const Template& t : space) out.push_back(predict(t, inst, m, c));
  // Equal predictions (past saturation, or latency-bound) prefer the fewest SMs and
  // threads: they leave the rest of the GPU to compute for the same time.
  std::stable_sort(out.begin(), out.end(), [](const Prediction& a, const Prediction& b) {
    if (a.ms != b.ms) return a.ms < b.ms;
    if (a.blocks != b.blocks) return a.blocks < b.blocks;
    if (a.tmpl.blocks != b.tmpl.blocks) return a.tmpl.blocks < b.tmpl.blocks;
    return a.tmpl.threads < b.tmpl.threads;
  });
  return out;
}

}  // namespace suite
