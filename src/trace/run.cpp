// trace/run.cpp: see run.h.
#include "trace/run.h"

#include <fmt/format.h>

#include "sandbox/verdict_read.h"

namespace trace {

using nlohmann::json;

namespace {

ReplyEvent reply_of(const json& e) {
  ReplyEvent r;
  r.turn = e.value("turn", 0);
  r.text = e.value("text", "");
  r.thinking = e.value("thinking", "");
  r.stop_reason = e.value("stop_reason", "stop");
  r.model = e.value("model", "");
  r.request_id = e.value("request_id", "");
  if (e.contains("usage") && e["usage"].is_object()) {
    r.usage_reported = true;
    r.input_tokens = e["usage"].value("input_tokens", int64_t{0});
    r.output_tokens = e["usage"].value("output_tokens", int64_t{0});
    r.cache_read_tokens = e["usage"].value("cache_read_tokens", int64_t{0});
    r.cache_write_tokens = e["usage"].value("cache_write_tokens", int64_t{0});
    r.usage_estimated = e["usage"].value("estimated", false);
  }
  r.cost_usd = e.value("cost_usd", 0.0);
  r.seconds = e.value("seconds", 0.0);
  r.attempts = e.value("attempts", 0);
  return r;
}

}  // namespace

bool read_run(const std::string& path, Run* out, std::string* err, std::string* warning) {
  *out = Run{};
  if (!read_trajectory(path, &out->raw, err, warning)) return false;
  for (size_t i = 0; i < out->raw.events.size(); ++i) {
    const json& e = out->raw.events[i];
    const trace::EventType type = trace::event_type(e);
    if (type == trace::EventType::reply) {
      out->replies.push_back(reply_of(e));
      out->replies.back().event = i;
    } else if (type == trace::EventType::candidate) {
      out->candidates.push_back({i, e.value("turn", 0), e.value("file", ""), e.value("sha256", ""),
                                 e.value("source", "")});
    } else if (type == trace::EventType::verdict) {
      VerdictEvent v;
      v.event = i;
      v.turn = e.value("turn", 0);
      v.sha256 = e.value("sha256", "");
      v.seconds = e.value("seconds", 0.0);
      if (!sandbox::verdict_from_json(e.value("verdict", json::object()), &v.verdict, err)) {
        *err = fmt::format("{}: event {} (turn {}): {}", path, i + 1, v.turn, *err);
        return false;
      }
      out->verdicts.push_back(std::move(v));
    }
  }
  return true;
}

}  // namespace trace
