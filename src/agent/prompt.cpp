// agent/prompt.cpp
#include "agent/prompt.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "agent/skeleton.h"
#include "agent/template.h"
#include "eval/eval.h"
#include "suite/cost.h"
#include "suite/expr.h"
#include "suite/instance.h"
#if __has_include("suite/analysis.h")
#include "suite/analysis.h"
#define KF_HAVE_ANALYSIS 1
#endif

namespace agent {

namespace fs = std::filesystem;

namespace {

bool host(const PromptInputs& in) {
  return in.eval.settings.backend != sandbox::Backend::cuda;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string params_str(const suite::Instance& inst) {
  std::string s;
  for (auto& [k, v] : inst.params) s += (s.empty() ? "" : ", ") + k + "=" + suite::format_number(v);
  for (auto& [k, v] : inst.str_params) s += (s.empty() ? "" : ", ") + k + "=" + v;
  return s;
}

// One line per tensor: its role, dtype and shape at each size (per rank where they differ).
std::string tensors_text(const std::vector<suite::Instance>& insts) {
  if (insts.empty()) return "";
  std::string s;
  for (size_t k = 0; k < insts[0].tensors.size(); ++k) {
    const auto& t0 = insts[0].tensors[k];
    s += fmt::format("- {} ({}, {}", t0.name, t0.output ? "output" : "input",
                     sandbox::dtype_name(t0.dtype));
    if (t0.output && (t0.atol > 0 || t0.rtol > 0))
      s += fmt::format(", tolerance atol {:g} rtol {:g}", t0.atol, t0.rtol);
    s += "): ";
    for (size_t i = 0; i < insts.size(); ++i) {
      const auto& t = insts[i].tensors[k];
      bool same = std::all_of(t.shape_by_rank.begin(), t.shape_by_rank.end(),
                              [&](auto& sh) { return sh == t.shape_by_rank[0]; });
      std::string shp;
      if (same) {
        shp = shape_str(t.shape_by_rank.at(0)) + " on every rank";
      } else {
        for (size_t r = 0; r < t.shape_by_rank.size(); ++r)
          shp += (r ? ", " : "") + fmt::format("rank {} {}", r, shape_str(t.shape_by_rank[r]));
      }
      s += (i ? "; " : "") + shp + " at " + insts[i].size;
    }
    s += "\n";
  }
  return s;
}

// On the host backend: the bytes only. The roofline is the GPU machine model's (link
// and HBM rates), and host times are no speed to hold against it.
std::string host_roofline_text(const suite::Instance& inst) {
  return fmt::format(
      "At size {} ({}), per rank: {:.4g} MB to exchange between ranks and {:.4g} MB of memory "
      "traffic. The host backend measures no speed (the ranks are processes on the CPU), so there "
      "is no roofline to aim at here: a correct kernel is the goal.",
      inst.size, params_str(inst), inst.comm_bytes / 1e6, inst.hbm_bytes / 1e6);
}

std::string roofline_text(const PromptInputs& in, const suite::Instance& inst) {
  if (host(in)) return host_roofline_text(inst);
  const suite::Machine& m = in.eval.machine;
  suite::Roofline r = suite::roofline(inst, m);
  std::string s = fmt::format(
      "At size {} ({}), per rank: {:.4g} MB over the interconnect ({:.4g} ms at {:g} GB/s), {:.4g} "
      "MB "
      "through HBM ({:.4g} ms), {:.4g} GFLOP ({:.4g} ms). No kernel can beat {:.4g} ms; the bound "
      "is {}. "
      "(Machine model: {}.)",
      inst.size, params_str(inst), inst.comm_bytes / 1e6, r.comm_ms, m.link_gbps,
      inst.hbm_bytes / 1e6, r.hbm_ms, inst.flops / 1e9, r.compute_ms, r.floor_ms, r.bound, m.name);
  return s;
}

// The cost model is of GPU kernels over the GPUs' links (launches, TMA, copy engines):
// on the host backend none of it applies, and the prompt says so instead.
std::string analysis(const PromptInputs& in, const suite::Instance& inst) {
  if (host(in))
    return "None for this run: the cost model describes GPU kernels (launches, link bandwidth, "
           "copy mechanisms), and the host backend runs none. Its ranks are processes on the CPU "
           "over shared memory and its times are not speeds; aim for a simple kernel that is "
           "correct at every size and on every rank.";
#ifdef KF_HAVE_ANALYSIS
  return suite::analysis_text(in.eval.problem, inst, in.eval.machine);
#else
  // TODO(agent): suite::analysis_text (src/suite/analysis.h, the builtin engineer's) is
  // not in this tree yet; the prompt says so rather than inventing an analysis.
  (void)in, (void)inst;
  return "(The cost model's analysis is not available in this build.)";
#endif
}

}  // namespace

// The primitives the candidate may use: on cuda their docs; on the host backend the
// host helpers' header, verbatim (library code, no problem's solution).
bool primitives_text(const PromptInputs& in, std::string* out, std::string* err) {
  if (!host(in)) return primitives_docs(in.eval.paths.source_root + "/primitives/docs", out, err);
  std::string helpers;
  if (!read_text_file(in.eval.paths.include_dir + "/kf/host.h", &helpers, err)) return false;
  *out =
      "The CUDA primitives (kf/*.cuh) cannot be used on the host backend. A host candidate is "
      "plain C++ over shared memory; <kf/host.h> has a barrier across ranks that never needs a "
      "reset, bf16 conversions and copy and sum loops. It is, verbatim:\n\n```cpp\n" +
      helpers + "```\n";
  return true;
}

bool primitives_docs(const std::string& docs_dir, std::string* out, std::string* err) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(docs_dir, ec))
    if (e.path().extension() == ".md") names.push_back(e.path().filename().string());
  if (ec || names.empty()) return (*err = docs_dir + ": no primitives docs (*.md) there", false);
  auto rank = [](const std::string& n) {
    return n == "README.md" ? 0 : n == "choosing.md" ? 2 : 1;
  };
  std::sort(names.begin(), names.end(),
            [&](auto& a, auto& b) { return rank(a) != rank(b) ? rank(a) < rank(b) : a < b; });
  out->clear();
  for (auto& n : names) {
    std::string text;
    if (!read_text_file(docs_dir + "/" + n, &text, err)) return false;
    *out += "### " + n + "\n\n" + text + (text.empty() || text.back() == '\n' ? "" : "\n") + "\n";
  }
  return true;
}

bool build_system_prompt(const PromptInputs& in, std::string* out, std::string* err) {
  const std::string ext = eval::kernel_extension(in.eval.settings.backend);
  const std::string fence = host(in) ? "cpp" : "cuda";
  std::string reply;
  Vars rv = {{"ext", ext},
             {"fence", fence},
             {"problem", in.eval.problem.name},
             {"world", std::to_string(in.eval.settings.world)},
             {"backend", sandbox::backend_name(in.eval.settings.backend)}};
  if (!render_prompt_file(in.prompts_dir,
                          in.mode == Mode::agent ? "reply_agent.md" : "reply_direct.md", rv, &reply,
                          err,
                          /*allow_unused=*/true))
    return false;
  std::string abi;
  if (!read_text_file(in.eval.paths.include_dir + "/kf/abi.h", &abi, err)) return false;
  std::string note = host(in) ? "This run uses the host backend (there is no GPU): a candidate is "
                                "host C++20 in a .cpp file that "
                                "includes <kf/kf.h>, compiled with g++ -O2 -std=c++20 -shared. "
                                "Ranks are processes on the CPU and the "
                                "symmetric heap is POSIX shared memory, so comm.peer pointers are "
                                "ordinary pointers and kf_run does its "
                                "work synchronously on the CPU. Synchronize with std::atomic_ref "
                                "on signal words and call sched_yield() "
                                "in spin loops (the ranks share few cores). The CUDA primitives "
                                "(kf/*.cuh) are not available."
                              : "Write CUDA C++ for sm_90 (H100/H200): one .cu file that includes "
                                "<kf/kf.cuh>, compiled with "
                                "nvcc -O2 -arch=sm_90 -shared. kf_run launches its kernels on "
                                "comm.stream() and returns without "
                                "synchronizing; the primitives in <kf/*.cuh> (documented below) "
                                "give signals, transfers, TMA, the copy "
                                "engine and schedules.";
  // The rules of the GPU (its streams, its NVLink multicast) only where there is one.
  std::string rules =
      host(in) ? "- `kf_run` does all its work on the CPU before it returns: CUDA and the "
                 "`kf/*.cuh` primitives are not available."
               : "- No streams of your own, no device changes, no cudaDeviceSynchronize or "
                 "host-blocking waits inside `kf_run`: enqueue everything on `comm.stream()`.\n"
                 "- No NVLink multicast (`cuMulticast*`) unless the topology below says it is "
                 "available.";
  Vars v = {{"language", host(in) ? "host C++ (.cpp)" : "CUDA (.cu)"},
            {"abi", abi},
            {"backend_note", note},
            {"backend_rules", rules},
            {"reply_format", reply}};
  return render_prompt_file(in.prompts_dir, "system.md", v, out, err);
}

bool build_task_prompt(const PromptInputs& in, std::string* out, std::string* err) {
  const suite::Problem& p = in.eval.problem;
  std::vector<suite::Instance> insts;
  std::string sizes;
  for (auto& sz : eval::sizes_to_run(in.eval, false)) {
    suite::Instance inst;
    if (!suite::resolve_instance(p, in.eval.settings.world, sz, in.eval.settings.overrides, &inst,
                                 err))
      return false;
    std::string role = sz == "small"
                           ? "checked against the CPU reference"
                           : (!in.eval.settings.time ? "checked against the baseline"
                                                     : "checked against the baseline and timed");
    sizes += (sizes.empty() ? "" : "; ") + sz + " (" + params_str(inst) + "): " + role;
    insts.push_back(inst);
  }
  std::string baseline_path = eval::default_kernel(p, in.eval.settings.backend, true), baseline;
  if (!read_text_file(baseline_path, &baseline, err)) return false;
  std::string prims;
  if (!primitives_text(in, &prims, err)) return false;
  std::string target =
      host(in) ? "correct (on the host backend no speedup can be measured, so a correct kernel "
                 "meets the goal)"
               : fmt::format("at least {:.2f}x as fast as the baseline (speedup >= {:.2f})",
                             in.target, in.target);
  Vars v = {{"problem", p.name},
            {"category", p.category},
            {"description", p.description},
            {"world", std::to_string(in.eval.settings.world)},
            {"backend", sandbox::backend_name(in.eval.settings.backend)},
            {"sizes", sizes},
            {"tensors", tensors_text(insts)},
            {"baseline_name", fs::path(baseline_path).filename().string()},
            {"fence", host(in) ? "cpp" : "cuda"},
            {"baseline_source", baseline},
            {"baseline_time", in.baseline_time},
            {"roofline", roofline_text(in, insts.back())},
            {"topology", suite::topology_text(in.topology)},
            {"analysis", analysis(in, insts.back())},
            {"primitives", prims},
            {"ext", eval::kernel_extension(in.eval.settings.backend)},
            {"skeleton", kernel_skeleton(p, in.eval.settings.backend)},
            {"target", target}};
  return render_prompt_file(in.prompts_dir, "task.md", v, out, err);
}

}  // namespace agent
