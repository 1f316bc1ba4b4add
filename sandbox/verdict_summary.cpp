// sandbox/verdict_summary.cpp: a verdict's one-line summary (verdict.h summarize), one
// story for each status, and describe_failure, the words for one rank's failure.
#include <fmt/format.h>

#include <algorithm>

#include "verdict.h"
#include "verdict_text.h"

namespace sandbox {

namespace {

std::string ms(double x) {
  if (x >= 100) return fmt::format("{:.0f}", x);
  if (x >= 10) return fmt::format("{:.1f}", x);
  if (x >= 0.01) return fmt::format("{:.3f}", x);
  return fmt::format("{:.3g}", x);
}

std::string join_ints(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

std::string ranks_word(const std::vector<int>& v) {
  return (v.size() == 1 ? "rank " : "ranks ") + join_ints(v);
}

std::string index_str(const std::vector<int64_t>& idx) {
  std::string s;
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s;
}

std::string where(const Failure& f) {
  std::string s;
  if (f.trial >= 0) s += "trial " + std::to_string(f.trial);
  if (f.call >= 0)
    s += (s.empty() ? "" : " ") + std::string(f.phase == "chained" ? "chained call " : "call ") +
         std::to_string(f.call);
  return s;
}

// Ranks grouped by what they were doing, in rank order of each group's first.
std::vector<std::pair<std::vector<int>, const Verdict::Stuck*>> group(
    const std::vector<Verdict::Stuck>& v) {
  std::vector<std::pair<std::vector<int>, const Verdict::Stuck*>> out;
  for (auto& s : v) {
    bool placed = false;
    for (auto& g : out)
      if (g.second->phase == s.phase && g.second->detail == s.detail &&
          g.second->in_candidate == s.in_candidate) {
        g.first.push_back(s.rank);
        placed = true;
        break;
      }
    if (!placed) out.push_back({{s.rank}, &s});
  }
  return out;
}

const Failure* first_failure(const Verdict& v, int* rank) {
  for (size_t i = 0; i < v.failures.size(); ++i)
    if (v.failures[i].kind == v.status) {
      *rank = i < v.failure_ranks.size() ? v.failure_ranks[i] : -1;
      return &v.failures[i];
    }
  if (!v.failures.empty()) {
    *rank = v.failure_ranks.empty() ? -1 : v.failure_ranks[0];
    return &v.failures[0];
  }
  return nullptr;
}

}  // namespace

std::string describe_failure(const Failure& f, int rank, const Verdict& v) {
  std::string s = rank >= 0 ? "rank " + std::to_string(rank) : "";
  if (f.who == Role::baseline) s += (s.empty() ? "" : ", ") + std::string("the baseline");
  auto sep = [&] { return s.empty() ? "" : ", "; };
  if (f.kind == Status::mismatch || f.kind == Status::unstable) {
    if (!f.tensor.empty()) s += sep() + std::string("tensor ") + f.tensor;
    if (f.input_modified) {
      s += sep() + std::string("an input, was modified by kf_run: ") + std::to_string(f.bad_count) +
           " of " + std::to_string(f.total) + " elements changed";
    } else if (f.total > 0) {
      s += sep() + std::to_string(f.bad_count) + " of " + std::to_string(f.total) + " elements " +
           (f.kind == Status::unstable ? "differ between calls" : "wrong");
    }
    if (!f.first_bad.empty()) {
      s += "; first bad: ";
      size_t n = std::min<size_t>(f.first_bad.size(), 4);
      for (size_t i = 0; i < n; ++i) {
        auto& b = f.first_bad[i];
        s += (i ? ", " : "") + f.tensor + "[" + index_str(b.index) + "] = " + num(b.got) +
             " (want " + num(b.want) + ")";
      }
      if (f.first_bad.size() > n) s += ", ...";
    }
    if (!f.input_modified && (f.max_abs > 0 || f.max_rel > 0)) {
      s += "; max abs err " + num(f.max_abs) + ", max rel err " + num(f.max_rel);
      for (auto& t : v.tolerances)
        if (t.tensor == f.tensor)
          s += " (tolerance atol " + num(t.atol) + " rtol " + num(t.rtol) + ")";
    }
    std::string w = where(f);
    if (!w.empty()) s += "; " + w;
    if (f.tensor.empty() && !f.message.empty()) s += sep() + f.message;
    return s;
  }
  if (!f.message.empty()) s += (s.empty() ? "" : ": ") + f.message;
  if (!f.phase.empty() && f.message.find(f.phase) == std::string::npos)
    s += " (in " + f.phase + ")";
  return s;
}

namespace {

std::string summarize_rejected(const Verdict& v) {
  if (v.findings.empty()) return "rejected";
  std::string s = "rejected: " + v.findings[0].render();
  if (v.findings.size() > 1) s += " (and " + std::to_string(v.findings.size() - 1) + " more)";
  return s;
}

// The log's first line that says "error" (or that the build took too long); else its first
// line that is not a build step's "[n/m]".
std::string summarize_compile_error(const Verdict& v) {
  std::string first;
  size_t start = 0;
  while (start < v.log.size()) {
    size_t end = v.log.find('\n', start);
    if (end == std::string::npos) end = v.log.size();
    std::string l = v.log.substr(start, end - start);
    if (first.empty() && !l.empty() && l[0] != '[') first = l;
    if (l.find("error") != std::string::npos || l.find("took longer") != std::string::npos) {
      first = l;
      break;
    }
    start = end + 1;
  }
  return "compile_error: " + first;
}

std::string summarize_timeout(const Verdict& v) {
  std::string s = "timeout: ";
  auto groups = group(v.stuck);
  for (size_t i = 0; i < groups.size(); ++i) {
    auto& [ranks, what] = groups[i];
    s += (i ? "; " : "") + ranks_word(ranks) + " stuck in " + phase_text(*what);
    if (i == 0 && v.limit_s > 0) s += " for more than " + num(v.limit_s) + " s";
  }
  if (groups.empty())
    s += v.log.empty() ? "the job ran out of time" : v.log.substr(0, v.log.find('\n'));
  for (auto& [ranks, what] : group(v.others))
    s += "; " + ranks_word(ranks) + " in " + phase_text(*what);
  return s;
}

std::string summarize_crash(const Verdict& v) {
  if (!v.crashes.empty()) {
    std::string s = "crash: ";
    for (size_t i = 0; i < v.crashes.size(); ++i) {
      std::string w = v.crashes[i].what;
      // "signal 11 (SIGSEGV) in check trial 0 call 0" -> "... in check, trial 0 call 0"
      size_t in = w.find(" in ");
      if (in != std::string::npos) {
        size_t sp = w.find(' ', in + 4);
        if (sp != std::string::npos && w.compare(sp + 1, 5, "trial") == 0) w.insert(sp, ",");
      }
      s += (i ? "; " : "") + std::string("rank ") + std::to_string(v.crashes[i].rank) +
           " died with " + w;
    }
    return s;
  }
  int r = -1;
  if (const Failure* f = first_failure(v, &r)) return "crash: " + describe_failure(*f, r, v);
  return v.log.empty() ? "crash" : "crash: " + v.log.substr(0, v.log.find('\n'));
}

std::string summarize_correct(const Verdict& v) {
  std::string s = "correct";
  if (!v.timed) return s + " (not timed)";
  s += ": " + ms(v.candidate_time.median_ms) + " ms median (p10 " + ms(v.candidate_time.p10_ms) +
       ", p90 " + ms(v.candidate_time.p90_ms) + ")";
  if (v.audit.check == TimeCheck::refuted)
    s += "; unconfirmed: the candidate's process claimed " + ms(v.audit.claimed_ms) +
         " ms, refuted by the judges' clocks (" + ms(v.audit.audited_ms) +
         " ms a call, the time used here)";
  if (!times_meaningful(v)) {
    s += v.emulated ? "; emulated ranks share a device"
                    : "; " + std::string(backend_name(v.backend)) + " backend";
    s += ": times are not a speed measurement";
    if (v.roofline_ms > 0)
      s += " (the cost model's roofline on the GPU: " + ms(v.roofline_ms) + " ms)";
    return s;
  }
  if (v.baseline_time.n > 0)
    s += " vs " + v.baseline_label + " " + ms(v.baseline_time.median_ms) + " ms";
  if (v.speedup > 0) s += ": " + fmt::format("{:.2f}x", v.speedup);
  if (v.busbw_gbps > 0) s += "; busbw " + num(v.busbw_gbps) + " GB/s";
  if (v.pct_roofline > 0)
    s += "; " + fmt::format("{:.0f}", v.pct_roofline) + "% of roofline (" + ms(v.roofline_ms) +
         " ms)";
  return s;
}

// load_error, setup_error, mismatch, unstable: the first failure of that kind, and the
// other ranks that had one.
std::string summarize_failure(const Verdict& v) {
  int r = -1;
  const Failure* f = first_failure(v, &r);
  if (f == nullptr)
    return status_name(v.status) + (v.log.empty() ? "" : ": " + v.log.substr(0, v.log.find('\n')));
  std::string s = status_name(v.status) + std::string(": ") + describe_failure(*f, r, v);
  std::vector<int> also;
  for (size_t i = 0; i < v.failures.size(); ++i)
    if (&v.failures[i] != f && v.failures[i].kind == f->kind && i < v.failure_ranks.size() &&
        v.failure_ranks[i] != r &&
        std::find(also.begin(), also.end(), v.failure_ranks[i]) == also.end())
      also.push_back(v.failure_ranks[i]);
  if (!also.empty()) s += " (also " + ranks_word(also) + ")";
  return s;
}

std::string summarize_status(const Verdict& v) {
  switch (v.status) {
    case Status::rejected:
      return summarize_rejected(v);
    case Status::compile_error:
      return summarize_compile_error(v);
    case Status::timeout:
      return summarize_timeout(v);
    case Status::crash:
      return summarize_crash(v);
    case Status::correct:
      return summarize_correct(v);
    default:
      return summarize_failure(v);
  }
}

// The first line the kf primitives printed from the device before trapping (a wait
// past its deadline names rank, slot and peer): the cause behind a bare "unspecified
// launch failure".
std::string kf_device_line(const std::string& log) {
  for (size_t start = 0; start < log.size();) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    if (log.compare(start, 4, "kf: ") == 0) return log.substr(start, end - start);
    start = end + 1;
  }
  return "";
}
}  // namespace

std::string summarize(const Verdict& v) {
  std::string s = summarize_status(v);
  if (v.status != Status::crash) return s;
  std::string line = kf_device_line(v.log);
  return line.empty() ? s : s + "; the device printed: " + line;
}

}  // namespace sandbox
