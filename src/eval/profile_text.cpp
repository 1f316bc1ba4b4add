// eval/profile_text.cpp: see profile_text.h.
#include "eval/profile_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "eval/sanitizer_log.h"

namespace eval {

namespace {

const std::string kStallPrefix = "smsp__warp_issue_stalled_";
const std::string kStallSuffix = "_per_warp_active.pct";

std::string us(double ns) {
  return ns >= 1e6 ? fmt::format("{:.3g} ms", ns / 1e6) : fmt::format("{:.3g} us", ns / 1e3);
}

std::string bytes(double b) {
  if (b >= 1 << 20) return fmt::format("{:.3g} MiB", b / (1 << 20));
  if (b >= 1 << 10) return fmt::format("{:.3g} KiB", b / (1 << 10));
  return fmt::format("{:.0f} B", b);
}

std::string side_name(const KernelProfile& k) {
  return k.side == sandbox::Role::candidate ? "your kernel" : "the baseline's kernel";
}

// "all_reduce_kernel(float*, int)" -> "all_reduce_kernel"; templates and namespaces kept.
std::string short_name(const std::string& name) {
  size_t depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>' && depth) --depth;
    if (name[i] == '(' && depth == 0) return name.substr(0, i);
  }
  return name;
}

double blocks_of(const KernelProfile& k) {
  return k.get("launch__grid_size", 0);
}

// "sm 12% of peak, DRAM 18% of peak, occupancy 9%".
std::string throughput_text(const KernelProfile& k) {
  std::string s;
  auto add = [&](const char* label, const char* metric) {
    double v = k.get(metric);
    if (v >= 0) s += fmt::format("{}{} {:.0f}%", s.empty() ? "" : ", ", label, v);
  };
  add("SM throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  add("DRAM", "dram__throughput.avg.pct_of_peak_sustained_elapsed");
  add("achieved occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active");
  if (!s.empty()) s += " (of peak)";
  return s;
}

std::string shape_text(const KernelProfile& k) {
  double blocks = blocks_of(k), sms = k.get("device__attribute_multiprocessor_count");
  std::string s =
      fmt::format("{:.0f} blocks of {:.0f} threads", blocks, k.get("launch__block_size", 0));
  if (sms > 0) s += fmt::format(" on {:.0f} SMs", sms);
  double regs = k.get("launch__registers_per_thread");
  if (regs >= 0) s += fmt::format(", {:.0f} registers/thread", regs);
  double smem = std::max(0.0, k.get("launch__shared_mem_per_block_static", 0)) +
                std::max(0.0, k.get("launch__shared_mem_per_block_dynamic", 0));
  if (k.metrics.count("launch__shared_mem_per_block_static"))
    s += ", " + bytes(smem) + " shared/block";
  return s;
}

std::string stalls_text(const KernelProfile& k) {
  std::string s;
  for (auto& [reason, pct] : top_stalls(k, 3))
    s += fmt::format("{}{:.0f}% {}", s.empty() ? "" : ", ", pct, stall_meaning(reason));
  return s.empty() ? "" : "warps stalled: " + s;
}

std::string kernel_line(const KernelProfile& k, bool with_rank) {
  std::string s = with_rank ? fmt::format("rank {}, ", k.rank) : "";
  s += fmt::format("{} {}: {}", side_name(k), short_name(k.kernel),
                   us(k.get("gpu__time_duration.sum", 0)));
  for (const std::string& part : {throughput_text(k), shape_text(k), stalls_text(k)})
    if (!part.empty()) s += "; " + part;
  return s;
}

// The candidate's kernels of one rank, longest first.
std::vector<const KernelProfile*> of_side(const ProfileReport& r, sandbox::Role side, int rank) {
  std::vector<const KernelProfile*> v;
  for (const KernelProfile& k : r.kernels)
    if (k.side == side && (rank < 0 || k.rank == rank)) v.push_back(&k);
  std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) {
    return a->get("gpu__time_duration.sum", 0) > b->get("gpu__time_duration.sum", 0);
  });
  return v;
}

double side_time(const ProfileReport& r, sandbox::Role side, int rank) {
  double t = 0;
  for (const KernelProfile* k : of_side(r, side, rank)) t += k->get("gpu__time_duration.sum", 0);
  return t;
}

std::vector<std::string> ncu_lines(const ProfileReport& r, size_t max_lines) {
  std::vector<std::string> out;
  int slowest = -1;
  double worst = -1;
  std::string per_rank;
  for (int rank = 0; rank < r.world; ++rank) {
    double t = side_time(r, sandbox::Role::candidate, rank);
    if (of_side(r, sandbox::Role::candidate, rank).empty()) continue;
    per_rank += fmt::format("{}rank {} {}", per_rank.empty() ? "" : ", ", rank, us(t));
    if (t > worst) worst = t, slowest = rank;
  }
  if (slowest < 0) return {"Nsight Compute measured none of your kernels in the profiled call."};
  const bool several = r.world > 1;
  if (several) out.push_back("your kernels' time per rank in the profiled call: " + per_rank);
  for (const KernelProfile* k : of_side(r, sandbox::Role::candidate, slowest)) {
    if (out.size() + 2 >= max_lines) break;
    out.push_back(kernel_line(*k, several) + ". Limit: " + limit_of(*k));
  }
  auto base = of_side(r, sandbox::Role::baseline, slowest);
  if (!base.empty() && out.size() + 1 < max_lines)
    out.push_back("for comparison, " + kernel_line(*base.front(), several));
  if (r.roofline_ms > 0 && out.size() < max_lines)
    out.push_back(
        fmt::format("the cost model's roofline for this size: {}", us(r.roofline_ms * 1e6)));
  if (r.emulated && out.size() < max_lines)
    out.push_back(
        "(emulated ranks share one GPU: the kernels' shape and stalls hold, their times do not)");
  return out;
}

std::string where_text(const SanitizerFinding& f) {
  if (f.file.empty()) return "";
  std::string base = f.file.substr(f.file.rfind('/') + 1);
  // kforge compiles a copy of the kernel named src-<hash>.cu: that is the kernel's file.
  if (base.rfind("src-", 0) == 0)
    return fmt::format("line {} of the kernel ({}:{})", f.line, base, f.line);
  return fmt::format("{}:{}", base, f.line);
}

std::vector<std::string> sanitizer_lines(const ProfileReport& r, size_t max_lines) {
  const char* tool = sandbox::enum_name(r.tool);
  const SanitizerFinding* f = first_with_line(r.findings);
  if (!f)
    return {fmt::format("compute-sanitizer {} reran the checks and reported no error.", tool)};
  std::vector<std::string> out;
  std::string where = where_text(*f);
  out.push_back(fmt::format("compute-sanitizer {} (rerun of the checks), rank {}: {}{}{}", tool,
                            f->rank, f->what,
                            f->kernel.empty() ? "" : " in " + short_name(f->kernel),
                            where.empty() ? "" : ", at " + where));
  size_t n = 0;
  for (size_t i = 0, j; i < f->text.size() && out.size() < max_lines; i = j + 1) {
    j = f->text.find('\n', i);
    if (j == std::string::npos) j = f->text.size();
    if (n++ > 0) out.push_back("  " + f->text.substr(i, j - i));  // the first is `what`
  }
  if (r.errors > 1 && out.size() < max_lines)
    out.push_back(fmt::format("({} errors reported in all, over the ranks)", r.errors));
  return out;
}

}  // namespace

std::vector<std::pair<std::string, double>> top_stalls(const KernelProfile& k, size_t n) {
  std::vector<std::pair<std::string, double>> v;
  for (auto& [name, pct] : k.metrics)
    if (name.rfind(kStallPrefix, 0) == 0 &&
        name.size() > kStallPrefix.size() + kStallSuffix.size() &&
        name.compare(name.size() - kStallSuffix.size(), kStallSuffix.size(), kStallSuffix) == 0) {
      std::string reason =
          name.substr(kStallPrefix.size(), name.size() - kStallPrefix.size() - kStallSuffix.size());
      if (pct >= 1 && reason != "selected" && reason != "not_selected") v.push_back({reason, pct});
    }
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
  if (v.size() > n) v.resize(n);
  return v;
}

std::string stall_meaning(const std::string& reason) {
  static const std::map<std::string, std::string> m = {
      {"sleeping", "asleep (__nanosleep: kf::wait's back-off while a peer's flag is not set)"},
      {"long_scoreboard", "waiting on global or peer memory loads (long scoreboard)"},
      {"membar", "in memory fences (membar)"},
      {"gmma", "waiting on warpgroup MMA (wgmma)"},
      {"barrier", "at __syncthreads (barrier)"},
      {"lg_throttle", "on a full load/store queue (lg throttle)"},
      {"mio_throttle", "on a full shared-memory/special-op queue (mio throttle)"},
      {"short_scoreboard", "waiting on shared memory (short scoreboard)"},
      {"wait", "on fixed-latency dependencies (wait)"},
      {"math_pipe_throttle", "on a busy math pipe"},
      {"no_instruction", "without instructions (instruction cache)"},
      {"branch_resolving", "resolving branches"},
      {"drain", "draining memory writes at exit"},
      {"dispatch_stall", "in dispatch"},
      {"imc_miss", "on constant-cache misses"},
      {"tex_throttle", "on a full texture queue"},
      {"misc", "for other reasons"}};
  auto it = m.find(reason);
  return it == m.end() ? reason : it->second;
}

std::string limit_of(const KernelProfile& k) {
  double sm = k.get("sm__throughput.avg.pct_of_peak_sustained_elapsed");
  double dram = k.get("dram__throughput.avg.pct_of_peak_sustained_elapsed");
  double blocks = blocks_of(k), sms = k.get("device__attribute_multiprocessor_count");
  auto stalls = top_stalls(k, 1);
  if (dram >= 60) return fmt::format("HBM bandwidth (DRAM at {:.0f}% of peak)", dram);
  if (sm >= 60) return fmt::format("the SMs' throughput ({:.0f}% of peak)", sm);
  // Under half the SMs busy is a launch-shape limit whatever else holds.
  if (sms > 0 && blocks > 0 && 2 * blocks <= sms)
    return fmt::format("too few blocks: {:.0f} blocks leave {:.0f} of {:.0f} SMs idle", blocks,
                       sms - blocks, sms);
  if (!stalls.empty() && stalls[0].second >= 30)
    return fmt::format("latency: {:.0f}% of warp cycles {}", stalls[0].second,
                       stall_meaning(stalls[0].first));
  if (sm >= 0 && dram >= 0)
    return fmt::format(
        "neither the SMs ({:.0f}%) nor HBM ({:.0f}%) is busy: latency or launch "
        "overhead dominates",
        sm, dram);
  return "not named by this metric set (--metrics brief adds the throughputs and stall reasons)";
}

std::vector<std::string> feedback_lines(const ProfileReport& r, size_t max_lines) {
  if (r.status != ProfileStatus::ran) {
    std::string what = r.tool == Tool::ncu ? "Nsight Compute" : "compute-sanitizer";
    return {fmt::format("({} {}: {})", what,
                        r.status == ProfileStatus::skipped ? "skipped" : "did not finish", r.note)};
  }
  return r.tool == Tool::ncu ? ncu_lines(r, max_lines) : sanitizer_lines(r, max_lines);
}

std::string render_profile(const ProfileReport& r) {
  std::string s = fmt::format("{} {} at world {}{} ({:.1f} s)\n", sandbox::enum_name(r.tool),
                              sandbox::enum_name(r.status), r.world,
                              r.emulated ? ", emulated ranks" : "", r.seconds);
  if (!r.note.empty()) s += "note: " + r.note + "\n";
  if (r.tool == Tool::ncu) {
    for (const KernelProfile& k : r.kernels)
      s += "  " + kernel_line(k, true) + "\n    limit: " + limit_of(k) + "\n";
    if (r.roofline_ms > 0)
      s += fmt::format("  the cost model's roofline: {}\n", us(r.roofline_ms * 1e6));
  } else {
    for (const SanitizerFinding& f : r.findings) {
      std::string where = where_text(f);
      s += fmt::format("  rank {}: {}{}\n", f.rank, f.what, where.empty() ? "" : " at " + where);
    }
    s += fmt::format("  {} error(s)\n", r.errors);
  }
  for (const std::string& f : r.raw_files) s += "  raw: " + f + "\n";
  return s;
}

void not_a_speed(sandbox::Verdict* v, const std::string& tool) {
  if (!v->timed || v->status != sandbox::Status::correct) return;
  v->speedup = v->busbw_gbps = v->baseline_busbw_gbps = v->pct_roofline = 0;
  v->flags.clear();
  v->summary = fmt::format(
      "correct; timed under {} ({:.4g} ms a call there), whose replays and instrumentation "
      "slow every call: not a speed measurement (kforge eval measures speed)",
      tool, v->candidate_time.median_ms);
}

}  // namespace eval
