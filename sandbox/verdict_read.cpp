// sandbox/verdict_read.cpp: a verdict back from its JSON (verdict.h read_verdict), the
// inverse of verdict_json: what `kforge show`, `kforge replay`, sweeps and the tests
// read instead of picking keys by name.
#include "verdict_read.h"

#include <fmt/format.h>

#include <algorithm>

namespace sandbox {

using nlohmann::json;

namespace {

// Reads j[key] into v when present; an old file without the key keeps the default.
template <class T>
void opt(const json& j, const char* key, T& v) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) it->get_to(v);
}

void lists_from(const json& j, Verdict* v) {
  if (j.contains("findings"))
    for (const json& f : j.at("findings")) {
      Finding x;
      opt(f, "rule", x.rule);
      opt(f, "file", x.file);
      opt(f, "line", x.line);
      opt(f, "what", x.what);
      opt(f, "why", x.why);
      opt(f, "instead", x.instead);
      v->findings.push_back(x);
    }
  if (j.contains("failures"))
    for (const json& f : j.at("failures")) {
      v->failures.push_back(f.get<Failure>());
      v->failure_ranks.push_back(f.value("rank", -1));
    }
  opt(j, "stuck", v->stuck);
  opt(j, "others", v->others);
  opt(j, "crashes", v->crashes);
  opt(j, "tolerances", v->tolerances);
  if (j.contains("seconds"))
    for (const json& s : j.at("seconds"))
      v->seconds.push_back({s.at(0).get<std::string>(), s.at(1).get<double>()});
}

// Files written before harness_notes existed (2026-12-05) kept how the run was confined
// among the notes, marked by these prefixes; they are the person's, never the model's.
void move_old_harness_notes(Verdict* v) {
  auto harness = [](const std::string& n) {
    return n.rfind("sandbox: ", 0) == 0 || n.rfind("isolation: ", 0) == 0;
  };
  for (auto& n : v->notes)
    if (harness(n)) v->harness_notes.push_back(n);
  v->notes.erase(std::remove_if(v->notes.begin(), v->notes.end(), harness), v->notes.end());
}

}  // namespace

void from_json(const json& j, Verdict& v) {
  v = Verdict{};
  if (!j.contains("status")) throw std::runtime_error("no \"status\"");
  j.at("status").get_to(v.status);
  opt(j, "summary", v.summary);
  opt(j, "problem", v.problem);
  opt(j, "candidate", v.candidate);
  opt(j, "world", v.world);
  opt(j, "backend", v.backend);
  opt(j, "emulated", v.emulated);
  opt(j, "size", v.size);
  opt(j, "log", v.log);
  opt(j, "limit_s", v.limit_s);
  opt(j, "timed", v.timed);
  opt(j, "candidate_time", v.candidate_time);
  opt(j, "baseline_time", v.baseline_time);
  opt(j, "baseline_label", v.baseline_label);
  opt(j, "speedup", v.speedup);
  opt(j, "roofline_ms", v.roofline_ms);
  opt(j, "pct_roofline", v.pct_roofline);
  opt(j, "busbw_gbps", v.busbw_gbps);
  opt(j, "baseline_busbw_gbps", v.baseline_busbw_gbps);
  opt(j, "off_stream_slack_ms", v.off_stream_slack_ms);
  opt(j, "timer_margin_ms", v.timer_margin_ms);
  opt(j, "audit", v.audit);  // absent before the timing audit: unaudited
  opt(j, "notes", v.notes);
  opt(j, "harness_notes", v.harness_notes);
  move_old_harness_notes(&v);
  opt(j, "flags", v.flags);
  lists_from(j, &v);
}

bool verdict_from_json(const json& j, Verdict* out, std::string* err) {
  try {
    from_json(j, *out);
    return true;
  } catch (const std::exception& e) {
    *err = std::string("not a verdict: ") + e.what();
    return false;
  }
}

bool read_verdict(const std::string& path, Verdict* out, std::string* err) {
  json j;
  if (!read_json_file(path, &j, err)) return false;
  if (verdict_from_json(j, out, err)) return true;
  *err = path + ": " + *err + " (a verdict.json written by kforge eval --json or kforge solve)";
  return false;
}

}  // namespace sandbox
