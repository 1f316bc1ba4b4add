// sandbox/verdict.cpp: JSON and text renderings of a Verdict, and its suspicious flags.
// (Its one-line summary is sandbox/verdict_summary.cpp.)
#include "verdict.h"

#include <algorithm>

#include "verdict_text.h"

namespace sandbox {

using nlohmann::json;

void flag_suspicious(Verdict* v) {
  auto add = [&](const char* f) {
    if (std::find(v->flags.begin(), v->flags.end(), f) == v->flags.end()) v->flags.push_back(f);
  };
  if (v->status != Status::correct || !v->timed || !times_meaningful(*v)) return;
  // The time counts the hidden work, but the kernel is built around hiding it.
  if (mostly_off_stream(v->candidate_time)) add("work_off_stream");
  if (mostly_unconfirmed(v->candidate_time) || v->audit.check == TimeCheck::refuted)
    add("time_unconfirmed");
  if (v->roofline_ms > 0 && v->candidate_time.median_ms > 0 &&
      v->candidate_time.median_ms < 0.9 * v->roofline_ms)
    add("faster_than_roofline");
  if (v->speedup > 10) add("excessive_speedup");
}

std::string render_text(const Verdict& v) {
  std::string s = (v.summary.empty() ? summarize(v) : v.summary) + "\n";
  std::string ctx = v.problem;
  if (v.world > 0)
    ctx += (ctx.empty() ? "" : ", ") + std::string("world ") + std::to_string(v.world);
  ctx += ", " + std::string(backend_name(v.backend)) + " backend";
  if (v.emulated) ctx += ", emulated";
  if (!v.size.empty()) ctx += ", size " + v.size;
  if (!ctx.empty()) s += "  (" + ctx + ")\n";
  if (v.findings.size() > 1 || (v.status != Status::rejected && !v.findings.empty())) {
    for (auto& f : v.findings) s += "  " + f.render() + "\n";
  }
  if (v.failures.size() > 1) {
    for (size_t i = 0; i < v.failures.size(); ++i) {
      int r = i < v.failure_ranks.size() ? v.failure_ranks[i] : -1;
      s += "  " + std::string(status_name(v.failures[i].kind)) + ": " +
           describe_failure(v.failures[i], r, v) + "\n";
    }
  }
  if (v.status == Status::mismatch || v.status == Status::unstable) {
    for (auto& f : v.failures)
      if (f.kind == v.status && f.input_modified) {
        s +=
            "  kf_run must not write its inputs: keep intermediates in workspace from comm.alloc\n";
        break;
      }
    bool chained = false;
    for (auto& f : v.failures)
      chained = chained || (f.kind == Status::unstable && f.phase == "chained");
    if (chained)
      s += "  every call behind the harness's barrier was right, but calls chained with no barrier "
           "between them (ranks entering up to tens of ms apart) were not: wait for every peer to "
           "enter before touching its buffers, and for every peer to be done before returning\n";
    else if (v.status == Status::unstable)
      s += "  repeated calls must agree: flags and counters in the workspace are not reset "
           "between calls, so wait for your peers and reuse signals with increasing values\n";
  }
  if (v.status == Status::timeout)
    for (auto& st : v.stuck)
      s += "  rank " + std::to_string(st.rank) + ": " + phase_text(st) + " for " + num(st.seconds) +
           " s\n";
  if (v.crashes.size() > 1)
    for (auto& c : v.crashes) s += "  rank " + std::to_string(c.rank) + ": " + c.what + "\n";
  if (v.status == Status::correct && v.timed && times_meaningful(v) && v.baseline_busbw_gbps > 0)
    s += "  NCCL busbw " + num(v.baseline_busbw_gbps) + " GB/s\n";
  for (auto& n : v.notes) s += "  note: " + n + "\n";
  for (auto& n : v.harness_notes) s += "  note: " + n + "\n";
  for (auto& f : v.flags) s += "  flag: " + f + "\n";
  if (!v.log.empty() && v.status != Status::correct) {
    s += "--- log ---\n" + v.log;
    if (v.log.back() != '\n') s += "\n";
  }
  return s;
}

json verdict_json(const Verdict& v) {
  json failures = json::array();
  for (size_t i = 0; i < v.failures.size(); ++i) {
    json f = v.failures[i];
    f["rank"] = i < v.failure_ranks.size() ? v.failure_ranks[i] : -1;
    failures.push_back(f);
  }
  json findings = json::array();
  for (auto& f : v.findings)
    findings.push_back({{"rule", f.rule},
                        {"file", f.file},
                        {"line", f.line},
                        {"what", f.what},
                        {"why", f.why},
                        {"instead", f.instead},
                        {"text", f.render()}});
  // An array of [stage, seconds], in the order the stages ran (an object would sort them).
  json secs = json::array();
  for (auto& [k, x] : v.seconds) secs.push_back({k, x});
  return json{{"status", v.status},
              {"summary", v.summary.empty() ? summarize(v) : v.summary},
              {"problem", v.problem},
              {"candidate", v.candidate},
              {"world", v.world},
              {"backend", v.backend},
              {"emulated", v.emulated},
              {"size", v.size},
              {"log", v.log},
              {"findings", findings},
              {"failures", failures},
              {"stuck", v.stuck},
              {"others", v.others},
              {"limit_s", v.limit_s},
              {"crashes", v.crashes},
              {"tolerances", v.tolerances},
              {"timed", v.timed},
              {"candidate_time", v.candidate_time},
              {"baseline_time", v.baseline_time},
              {"baseline_label", v.baseline_label},
              {"speedup", v.speedup},
              {"roofline_ms", v.roofline_ms},
              {"pct_roofline", v.pct_roofline},
              {"busbw_gbps", v.busbw_gbps},
              {"baseline_busbw_gbps", v.baseline_busbw_gbps},
              {"off_stream_slack_ms", v.off_stream_slack_ms},
              {"timer_margin_ms", v.timer_margin_ms},
              {"time_check", v.audit.check},
              {"audit", v.audit},
              {"notes", v.notes},
              {"harness_notes", v.harness_notes},
              {"flags", v.flags},
              {"seconds", secs}};
}

}  // namespace sandbox
