// eval/eval.cpp
#include "eval/eval.h"

#include <algorithm>

#include "eval/eval_slot.h"
#include "eval/serve_client.h"
#include "kf_build_paths.h"
#include "sandbox/deadline.h"
#include "suite/cost.h"
#include "suite/instance.h"

namespace eval {

std::string kernel_extension(sandbox::Backend backend) {
  return backend == sandbox::Backend::cuda ? ".cu" : ".cpp";
}

std::string default_kernel(const suite::Problem& p, sandbox::Backend backend, bool baseline) {
  const bool cuda = backend == sandbox::Backend::cuda;
  if (baseline) return p.dir + (cuda ? "/baseline.cu" : "/baseline_host.cpp");
  return p.dir + (cuda ? "/examples/uva.cu" : "/examples/host.cpp");
}

std::vector<std::string> sizes_to_run(const EvalConfig& cfg, bool baseline) {
  std::vector<std::string> sizes = sandbox::sizes_to_run(cfg.settings, baseline);
  if (!cfg.settings.sizes.empty() || cfg.settings.backend != sandbox::Backend::host) return sizes;
  const auto& named = cfg.problem.sizes;
  if (std::none_of(named.begin(), named.end(), [](auto& z) { return z.name == "host"; }))
    return sizes;
  std::replace(sizes.begin(), sizes.end(), std::string("full"), std::string("host"));
  return sizes;
}

void fill_toolchain(const suite::Paths& paths, sandbox::EvalRequest* req) {
  req->toolchain.nvcc = KF_NVCC;
  req->toolchain.include_dir = paths.include_dir;
  req->toolchain.nccl_include = KF_NCCL_INCLUDE;
  req->toolchain.nccl_lib_dir = KF_NCCL_LIB_DIR;
  req->launch.rank_binary = paths.rank_binary;
}

bool make_request(const EvalConfig& cfg, const std::string& kernel, sandbox::Role role,
                  sandbox::EvalRequest* req, std::string* err) {
  const bool is_baseline = role == sandbox::Role::baseline;
  const sandbox::Settings& s = cfg.settings;
  const std::vector<std::string> sizes = sizes_to_run(cfg, is_baseline);
  req->settings = s;
  req->settings.problem = cfg.problem.name;
  req->candidate_path = kernel;
  req->candidate_role = role;
  req->problem_dir = cfg.problem.dir;
  req->baseline_path = is_baseline ? "" : default_kernel(cfg.problem, s.backend, true);
  req->toolchain.backend = s.backend;
  req->toolchain.cache_dir = cfg.paths.cache_dir + "/build";
  fill_toolchain(cfg.paths, req);
  req->on_stage = cfg.on_stage;
  req->instances.clear();

  for (size_t k = 0; k < sizes.size(); ++k) {
    const std::string& size = sizes[k];
    suite::Instance inst;
    if (!suite::resolve_instance(cfg.problem, s.world, size, s.overrides, &inst, err)) return false;
    sandbox::Instance si;
    si.label = size;
    suite::apply_instance(inst, &si.job);
    // small is held against the oracle; full against the baseline's outputs (the ranks
    // fall back to the oracle when the baseline cannot run, e.g. in emulation).
    si.job.reference =
        size == "small" || is_baseline ? sandbox::Reference::oracle : sandbox::Reference::baseline;
    // Only the last size is timed: it is the one whose speed is reported. The race pass
    // needs no size: the first job runs it, the others are spared.
    si.job.timed = s.time && k + 1 == sizes.size();
    si.job.race = s.race_pass && k == 0;
    suite::Roofline roof = suite::roofline(inst, cfg.machine);
    si.roofline_ms = roof.floor_ms;
    si.busbw_bytes = inst.has_busbw ? inst.busbw_bytes : 0;
    si.busbw_factor = inst.has_busbw ? inst.busbw_factor : 0;
    req->instances.push_back(si);
  }
  return true;
}

bool evaluate_request(const EvalConfig& cfg, sandbox::EvalRequest& req, sandbox::Verdict* v,
                      std::string* err) {
  // Under a sweep, wait for this eval's slot (its GPU set, or a share of the cores), with
  // the libraries built first: the compile, seconds of one core, then overlaps the eval
  // that holds the slot instead of keeping the GPU idle once the slot is ours. An eval
  // for a server is built here too: in this process, while the server runs another.
  const bool remote = !cfg.server.empty() && req.candidate_role == sandbox::Role::candidate;
  EvalSlot slot;
  SlotSpec spec = slot_spec(cfg.settings.backend, cfg.settings.world);
  if (spec.count > 0 || remote) sandbox::prebuild(req);
  if (spec.count > 0 && !slot.acquire(spec, err)) return false;
  std::string unserved;
  if (remote) {
    if (cfg.on_stage) cfg.on_stage("evaluating on kforge serve");
    if (evaluate_on_server(cfg.server, req, cfg.paths.source_root, v, &unserved)) return true;
    if (sandbox::stop_requested()) return (*err = unserved, false);
  }
  // On warm ranks the eval's folder is beneath its set's root: the set's jail binds that.
  if (cfg.warm) req.warm = cfg.warm->set_for(req);
  const std::string under = req.warm ? req.warm->root() : cfg.paths.runs_dir + "/evals";
  req.eval_dir = sandbox::make_eval_dir(under);
  if (req.eval_dir.empty()) {
    *err = "cannot create a run directory under " + under;
    return false;
  }
  if (!sandbox::evaluate(req, v, err)) return false;
  if (!unserved.empty())
    v->harness_notes.push_back("kforge serve (KFORGE_SERVE) not used: " + unserved +
                               "; this eval ran on ranks of its own");
  return true;
}

bool evaluate_file(const EvalConfig& cfg, const std::string& kernel, sandbox::Role role,
                   sandbox::Verdict* v, std::string* err) {
  sandbox::EvalRequest req;
  if (!make_request(cfg, kernel, role, &req, err)) return false;
  return evaluate_request(cfg, req, v, err);
}

void use_warm_ranks(EvalConfig* cfg) {
  cfg->warm = std::make_shared<sandbox::WarmPool>(cfg->paths.runs_dir + "/evals");
}

}  // namespace eval
