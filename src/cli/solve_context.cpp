// cli/solve_context.cpp: see solve_context.h.
#include "cli/solve_context.h"

#include <fmt/core.h>

namespace cli {

// The topology the prompt describes: the file given, the host's, or the machine's as
// detected (none, with the reason, when it cannot be). False only for a bad file.
bool choose_topology(const std::string& file, sandbox::Backend backend, suite::Topology* topo,
                     std::string* err) {
  if (!file.empty()) return suite::load_topology(file, topo, err);
  if (backend == sandbox::Backend::host) {
    *topo = suite::host_topology();
    return true;
  }
  std::string why;
  if (suite::detect_topology(topo, &why)) return true;
  fmt::print(stderr, "kforge solve: {}\n", why);
  *topo = suite::Topology{};
  topo->source = "none";
  topo->note = "The topology could not be detected: " + why;
  return true;
}

std::string baseline_time_text(const eval::EvalConfig& cfg, const suite::Topology& topo,
                               bool headless) {
  if (cfg.settings.backend != sandbox::Backend::cuda)
    return "The baseline's time is not measured here: this is the host backend, where times are "
           "not a speed measurement.";
  if (static_cast<int>(topo.gpus.size()) < cfg.settings.world)
    return fmt::format(
        "The baseline's time is not measured here: {} ranks on {} GPUs is emulation.",
        cfg.settings.world, topo.gpus.size());
  eval::EvalConfig b = cfg;
  b.settings.sizes = {"full"};
  b.settings.time = true;
  sandbox::Verdict v;
  std::string err;
  if (!headless) fmt::print(stderr, "kforge solve: timing the baseline once ...\n");
  if (!eval::evaluate_file(b, eval::default_kernel(cfg.problem, cfg.settings.backend, true),
                           sandbox::Role::baseline, &v, &err) ||
      v.status != sandbox::Status::correct || !v.timed)
    return "The baseline's time could not be measured here (" + (err.empty() ? v.summary : err) +
           ").";
  std::string s = fmt::format(
      "The baseline takes {:.4g} ms (median; p10 {:.4g}, p90 {:.4g}) at size full on this machine",
      v.candidate_time.median_ms, v.candidate_time.p10_ms, v.candidate_time.p90_ms);
  if (v.busbw_gbps > 0) s += fmt::format(", busbw {:.3g} GB/s", v.busbw_gbps);
  if (v.roofline_ms > 0)
    s += fmt::format(", {:.0f}% of the roofline", 100 * v.roofline_ms / v.candidate_time.median_ms);
  return s + ".";
}

}  // namespace cli
