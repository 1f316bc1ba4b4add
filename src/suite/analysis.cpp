// suite/analysis.cpp: per-template predictions of the PK cost model.
#include "suite/analysis.h"

#include <algorithm>
#include <cmath>

#include "suite/cost.h"

namespace suite {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// kf::grid_for: the blocks a grid-stride kernel launches over `work` 16-byte vectors.
int grid_for(int64_t work, int threads, int max_blocks) {
  int64_t b = ceil_div(std::max<int64_t>(work, 1), threads);
  return static_cast<int>(std::min<int64_t>(b, max_blocks));
}

// The source's defaults for knobs a template leaves unset (the expert kernels' config).
int default_threads(const std::string& problem) { return problem == "all_gather" ? 256 : 512; }
int default_blocks(const std::string& problem) { return problem == "all_gather" ? 16 : 32; }

// The achievable link rate of a mechanism, from PK's 1 GB all-SM numbers scaled by the
// share of the SMs it needs to saturate (TMA ~15, registers ~76) and, for TMA, by the
// message size below 2 KB; copy engines ramp with the chunk, 90% at 256 MB.
double mech_gbps(const std::string& mech, int blocks, int threads, double msg_bytes,
                 const Machine& m, const CostConstants& c) {
  double bw = 0;
  if (mech == "tma") {
    bw = c.tma_gbps * std::min(1.0, blocks / c.tma_sat_sms) * std::min(1.0, msg_bytes / c.tma_min_msg);
  } else if (mech == "ce") {
    const double half = c.ce_sat_bytes / 9;  // s/(s+half) = 0.9 at the saturating chunk
    bw = c.ce_gbps * msg_bytes / (msg_bytes + half);
  } else {  // reg, host
    const double sms = blocks * std::min(1.0, threads / c.full_threads);
    bw = c.reg_gbps * std::min(1.0, sms / c.reg_sat_sms);
  }
  return m.link_gbps > 0 ? std::min(bw, m.link_gbps) : bw;
}

}  // namespace

Prediction predict(const Template& t, const Instance& inst, const Machine& m,
                   const CostConstants& c) {
  Prediction p;
  p.tmpl = t;
  const int w = std::max(inst.world, 1);
  const double S = tensor_bytes(inst, "x"), Y = tensor_bytes(inst, "y");
  const double esize = inst.str_params.count("dtype") && inst.str_params.at("dtype") == "bf16" ? 2 : 4;
  const int64_t per_vec = static_cast<int64_t>(16 / esize);
  const int64_t nx = static_cast<int64_t>(S / esize), ny = static_cast<int64_t>(Y / esize);
  const int threads = t.threads > 0 ? t.threads : default_threads(t.problem);
  const int max_blocks = t.blocks > 0 ? t.blocks : default_blocks(t.problem);
  std::string mech = t.mech;
  double msg = S;  // bytes per transfer, for TMA tiles and copy-engine calls
  int64_t work = nx / per_vec;
  p.comm_bytes = inst.comm_bytes;
  p.hbm_bytes = inst.hbm_bytes;
  p.hops = t.algo == "push" ? 1 : 2;  // a push is posted; a pull waits for the reply

  if (t.problem == "all_reduce") {
    if (t.algo == "two_shot") {  // read our part from all, push its sum to all
      work = ceil_div(nx, w) / per_vec;
      p.hbm_bytes = 2 * S;
      p.hops = 3;
    } else {  // one-shot (and the host's pull and push): every rank's whole x to every rank
      p.comm_bytes = (w - 1) * S;
      p.hbm_bytes = (w + 1) * S;
    }
  } else if (t.problem == "reduce_scatter") {
    work = ny / per_vec;
  } else if (t.problem == "all_gather") {
    msg = static_cast<double>(t.chunk > 0 ? t.chunk : 16384);
    if (mech == "tma" && nx % 4 != 0) mech = "reg";  // unaligned chunks: register path
    if (mech == "ce") msg = S;
  } else if (t.problem == "broadcast") {
    if (t.algo == "relay" && w > 1) {  // root: its part read by all, its part pushed to all
      p.comm_bytes = 2.0 * (w - 1) / w * S;
      p.hbm_bytes = 2 * S;
      work = ceil_div(nx, w) / 4;
      p.hops = 3;
    } else {                           // every rank pulls the root's whole x
      p.comm_bytes = (w - 1) * S;
      p.hbm_bytes = w * S + Y;
    }
  }
  if (w == 1) p.comm_bytes = 0;

  if (mech == "ce") {
    p.kernels = 2;  // the barrier kernels around the copies
    p.barriers = 2;
    p.ce_calls = t.problem == "all_gather" ? w : 1;
    p.blocks = 1;
  } else {
    p.kernels = 1;
    p.barriers = 2;
    if (mech == "tma") {
      const int64_t tiles = nx * static_cast<int64_t>(esize) / std::max<int64_t>(t.chunk, 16);
      p.blocks = tiles > 0 ? static_cast<int>(std::min<int64_t>(tiles, max_blocks))
                           : grid_for(nx / 4, threads, max_blocks);
    } else {
      p.blocks = grid_for(work, threads, max_blocks);
    }
  }
  if (w == 1) p.hops = 0;
  p.bw_gbps = mech_gbps(mech, p.blocks, threads, msg, m, c);
  p.launch_ms = (p.kernels * c.launch_us + p.ce_calls * c.ce_call_us) * 1e-3;
  p.sync_ms = (p.barriers * c.barrier_us + p.hops * c.hop_us) * 1e-3;
  p.comm_ms = p.comm_bytes > 0 && p.bw_gbps > 0 ? p.comm_bytes / (p.bw_gbps * 1e9) * 1e3 : 0;
  p.mem_ms = m.hbm_gbps > 0 ? p.hbm_bytes / (m.hbm_gbps * 1e9) * 1e3 : 0;
  const double data_ms = std::max(p.comm_ms, p.mem_ms);
  p.ms = p.launch_ms + p.sync_ms + data_ms;
  if (p.launch_ms + p.sync_ms >= data_ms) p.bound = "latency";
  else p.bound = p.comm_ms >= p.mem_ms ? "comm" : "hbm";
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
