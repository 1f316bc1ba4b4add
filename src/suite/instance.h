// suite/instance.h: a problem made concrete for one world size, one named size and the
// user's overrides: every parameter's value, every tensor's shape on every rank, the
// tolerances, the workspace and the cost model's numbers. apply_instance copies it into
// the sandbox::Job that kforge hands the ranks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sandbox/job.h"
#include "suite/problem.h"

namespace suite {

struct Instance {
  std::string problem;
  std::string size;
  int world = 1;
  std::map<std::string, double> params;           // numeric parameters (passed to kf_run)
  std::map<std::string, std::string> str_params;  // dtype and string parameters
  std::vector<sandbox::JobTensor> tensors;        // in problem order
  uint64_t workspace_bytes = 64ull << 20;
  // The cost model, per rank (problem.json "cost").
  double comm_bytes = 0, hbm_bytes = 0, flops = 0;
  // What cost expressions see here (Problem::names(true) with values: numeric parameters,
  // world, dsize, <tensor>_numel and <tensor>_bytes of rank 0), for search.json's terms.
  Vars cost_vars;
  // nccl-tests' bus bandwidth (problem.json "busbw"); has_busbw false: none declared.
  bool has_busbw = false;
  double busbw_bytes = 0, busbw_factor = 0;
  // The dtype the FLOPs run in, for the roofline: the `dtype` parameter if there is one,
  // else the first output's dtype.
  kf::DType compute_dtype = kf::DType::f32;
};

// Resolves problem `p` at `world` ranks, size `size` (small, full, ...) and `overrides`
// ("PARAM=VALUE" strings, e.g. "n=4096", "n=2^20", "dtype=bf16"): defaults first, then the
// size's settings, then the overrides in order. Every error names what is wrong (the
// override, the constraint and its values, the field of problem.json) and what is valid.
// `unsatisfied` (optional) is set when the failure is only that this world or a constraint
// rules the instance out, not that the spec or an override is wrong.
bool resolve_instance(const Problem& p, int world, const std::string& size,
                      const std::vector<std::string>& overrides, Instance* out, std::string* err,
                      bool* unsatisfied = nullptr);

// Fills the size's part of a job: size, params, str_params, tensors and workspace_bytes.
void apply_instance(const Instance& inst, sandbox::Job* job);

// "<problem> small world=2 dtype=fp32 n=4099": one line for logs and reports.
std::string instance_label(const Instance& inst);

}  // namespace suite
