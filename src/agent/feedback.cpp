// agent/feedback.cpp
#include "agent/feedback.h"

#include <fmt/core.h>

#include <cctype>
#include <sstream>
#include <vector>

#include "agent/template.h"

namespace agent {

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string context(const sandbox::Verdict& v) {
  std::string s = fmt::format("world {}, {} backend", v.world, sandbox::backend_name(v.backend));
  if (v.emulated) s += ", emulated ranks";
  if (!v.size.empty()) s += ", size " + v.size;
  return s;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The failures below the summary line, less the one that line already states (its first
// failure, or its crash), so that no line is said twice; "" when none is left.
std::string failures_text(const sandbox::Verdict& v, const std::string& summary) {
  std::string s;
  size_t n = std::min<size_t>(v.failures.size(), 8);
  for (size_t i = 0; i < n; ++i) {
    int r = i < v.failure_ranks.size() ? v.failure_ranks[i] : -1;
    std::string line = std::string(sandbox::status_name(v.failures[i].kind)) + ": " +
                       sandbox::describe_failure(v.failures[i], r, v);
    if (summary == line || starts_with(summary, line + " (also ")) continue;
    s += "- " + line + "\n";
  }
  if (v.failures.size() > n) s += fmt::format("- ... and {} more\n", v.failures.size() - n);
  for (auto& c : v.crashes) {
    std::string said = fmt::format("rank {} died with ", c.rank);
    if (starts_with(summary, "crash: ") && summary.find(said) != std::string::npos) continue;
    s += "- " + said + c.what + "\n";
  }
  return s.empty() ? "" : "\n" + s;  // a blank line after the summary when there is a list
}

std::string log_block(const sandbox::Verdict& v) {
  if (v.log.empty()) return "";
  return "\nOutput of the ranks (last lines):\n```\n" + clip_tail(v.log, 30, 3000) + "```\n";
}

std::string stuck_line(const sandbox::Verdict::Stuck& s, const char* verb) {
  std::string extra = s.detail;
  if (s.in_candidate) extra += std::string(extra.empty() ? "" : ", ") + "inside kf_run";
  return fmt::format("- rank {} {} {}{} for {:.3g} s\n", s.rank, verb, s.phase,
                     extra.empty() ? "" : " (" + extra + ")", s.seconds);
}

std::string goal_text(const sandbox::Verdict& v, double target) {
  if (v.status != sandbox::Status::correct)
    return speedup_measurable(v) || v.backend == sandbox::Backend::cuda
               ? fmt::format(
                     "The goal is a correct kernel with a speedup of at least {:.2f}x over the "
                     "baseline.",
                     target)
               : "The goal is a correct kernel.";
  if (!speedup_measurable(v)) {
    if (v.backend == sandbox::Backend::cuda && !v.emulated && !v.timed)
      return "It was not timed, so correct is all that is asked here.";
    return "Times here are not a speed measurement (" +
           std::string(v.emulated ? "emulated ranks share a device"
                                  : sandbox::backend_name(v.backend) + std::string(" backend")) +
           "), so correct is the goal.";
  }
  if (v.speedup >= target)
    return fmt::format("That meets the goal (a speedup of at least {:.2f}x).", target);
  return fmt::format(
      "It is not fast enough yet: {:.2f}x, the goal is at least {:.2f}x. Use the roofline and the "
      "primitives' docs to find where the time goes (launch latency at small sizes, link bandwidth "
      "at large ones), and send a faster version of the whole file.",
      v.speedup, target);
}

std::string times_text(const sandbox::Verdict& v) {
  std::string s;
  if (speedup_measurable(v)) {
    s += fmt::format("- yours: median {:.4g} ms (p10 {:.4g}, p90 {:.4g})\n",
                     v.candidate_time.median_ms, v.candidate_time.p10_ms, v.candidate_time.p90_ms);
    if (v.baseline_time.n > 0)
      s += fmt::format("- baseline (NCCL): median {:.4g} ms\n", v.baseline_time.median_ms);
    s += fmt::format("- speedup: {:.2f}x\n", v.speedup);
    if (v.roofline_ms > 0)
      s += fmt::format("- roofline: {:.4g} ms; you are at {:.0f}% of it\n", v.roofline_ms,
                       v.pct_roofline);
    if (v.busbw_gbps > 0)
      s += fmt::format("- busbw: {:.3g} GB/s (NCCL {:.3g} GB/s)\n", v.busbw_gbps,
                       v.baseline_busbw_gbps);
  }
  for (auto& f : v.flags) s += "- flag: " + f + "\n";
  // (The verdict's harness_notes, how the run was confined and checked, are the person's:
  // to the model they are noise and host paths.)
  for (auto& n : v.notes) s += "- note: " + n + "\n";
  return s;
}

// A suite's advice on a kind of failure, <prompts_dir>/advice_<what>.md ("" where the
// suite has none), as a paragraph.
std::string advice(const std::string& prompts_dir, const std::string& what) {
  std::string text, err;
  if (!read_text_file(prompts_dir + "/advice_" + what + ".md", &text, &err)) return "";
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text.empty() ? "" : text + "\n\n";
}

}  // namespace

std::string clip_head(const std::string& log, size_t max_lines, size_t max_chars) {
  auto ls = lines_of(log);
  std::string out;
  size_t i = 0;
  for (; i < ls.size() && i < max_lines && out.size() + ls[i].size() < max_chars; ++i)
    out += ls[i] + "\n";
  if (i < ls.size()) out += fmt::format("[{} more lines cut]\n", ls.size() - i);
  return out;
}

std::string clip_tail(const std::string& log, size_t max_lines, size_t max_chars) {
  auto ls = lines_of(log);
  std::vector<std::string> keep;
  size_t chars = 0;
  for (size_t k = ls.size();
       k-- > 0 && keep.size() < max_lines && chars + ls[k].size() < max_chars;) {
    keep.push_back(ls[k]);
    chars += ls[k].size() + 1;
  }
  std::string out;
  if (keep.size() < ls.size())
    out += fmt::format("[{} earlier lines cut]\n", ls.size() - keep.size());
  for (size_t k = keep.size(); k-- > 0;) out += keep[k] + "\n";
  return out;
}

bool speedup_measurable(const sandbox::Verdict& v) {
  return v.status == sandbox::Status::correct && v.backend == sandbox::Backend::cuda &&
         !v.emulated && v.timed && v.speedup > 0;
}

bool target_met(const sandbox::Verdict& v, double target) {
  if (v.status != sandbox::Status::correct) return false;
  return !speedup_measurable(v) || v.speedup >= target;
}

bool better_than(const sandbox::Verdict& a, const sandbox::Verdict& b) {
  bool ca = a.status == sandbox::Status::correct, cb = b.status == sandbox::Status::correct;
  if (ca != cb) return ca;
  if (!ca) return false;
  if (speedup_measurable(a) && speedup_measurable(b)) return a.speedup > b.speedup;
  if (speedup_measurable(a) != speedup_measurable(b)) return speedup_measurable(a);
  if (a.timed && b.timed) return a.candidate_time.median_ms < b.candidate_time.median_ms;
  return a.timed && !b.timed;
}

bool render_feedback(const std::string& prompts_dir, const sandbox::Verdict& v, int turn,
                     double target, std::string* out, std::string* err) {
  const std::string summary = v.summary.empty() ? sandbox::summarize(v) : v.summary;
  Vars vars = {{"turn", std::to_string(turn)},
               {"summary", summary},
               {"context", context(v)},
               {"goal", goal_text(v, target)}};
  const sandbox::Status st = v.status;
  if (st == sandbox::Status::rejected) {
    std::string f;
    for (auto& x : v.findings) f += "- " + x.render() + "\n";
    vars["findings"] = f;
  } else if (st == sandbox::Status::compile_error) {
    vars["log"] = clip_head(v.log, 60, 6000);
  } else if (st == sandbox::Status::load_error || st == sandbox::Status::setup_error ||
             st == sandbox::Status::crash) {
    vars["failures"] = failures_text(v, summary);
    vars["log"] = log_block(v);
  } else if (st == sandbox::Status::timeout) {
    std::string s;
    for (auto& x : v.stuck) s += stuck_line(x, "was stuck in");
    for (auto& x : v.others) s += stuck_line(x, "was in");
    if (v.limit_s > 0) s += fmt::format("(the phase's limit is {:.3g} s)\n", v.limit_s);
    vars["stuck"] = s;
  } else if (st == sandbox::Status::mismatch || st == sandbox::Status::unstable) {
    vars["failures"] = failures_text(v, summary);
    bool modified = false;
    for (auto& f : v.failures) modified |= f.input_modified;
    std::string text;
    if (modified) text += advice(prompts_dir, "input_modified");
    if (st == sandbox::Status::unstable)
      text += advice(prompts_dir, "unstable");
    else if (!modified)
      text += advice(prompts_dir, "mismatch");
    vars["advice"] = text;
  } else if (st == sandbox::Status::correct) {
    vars["times"] = times_text(v);
  } else {
    *err = std::string("feedback: unknown verdict status '") + sandbox::status_name(st) + "'";
    return false;
  }
  return render_prompt_file(
      prompts_dir, "feedback_" + std::string(sandbox::status_name(st)) + ".md", vars, out, err);
}

bool render_format_error(const std::string& prompts_dir, const std::string& why, int remaining,
                         std::string* out, std::string* err) {
  // "1 more reply", "2 more replies": the template's words around it agree with both.
  std::string more = fmt::format("{} more repl{}", remaining, remaining == 1 ? "y" : "ies");
  return render_prompt_file(prompts_dir, "format_error.md", {{"error", why}, {"remaining", more}},
                            out, err);
}

}  // namespace agent
