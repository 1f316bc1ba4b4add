// src/llm/anthropic.cpp: see anthropic.h.
#include "llm/anthropic.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace llm {

using nlohmann::json;

namespace {

// Anthropic's input_tokens excludes the cached parts; Usage counts them all.
void parse_usage(const json& u, Reply* reply) {
  if (!u.is_object()) return;
  Usage& us = reply->usage;
  us.reported = true;
  int64_t in = jint(u, "input_tokens"), cr = jint(u, "cache_read_input_tokens"),
          cw = jint(u, "cache_creation_input_tokens");
  // message_delta repeats usage cumulatively (or only output_tokens): never go down.
  us.cache_read_tokens = std::max(us.cache_read_tokens, cr);
  us.cache_write_tokens = std::max(us.cache_write_tokens, cw);
  us.input_tokens = std::max(us.input_tokens, in + cr + cw);
  us.output_tokens = std::max(us.output_tokens, jint(u, "output_tokens"));
}

}  // namespace

std::string anthropic_stop_reason(const std::string& s) {
  if (s == "end_turn" || s == "stop_sequence") return "stop";
  if (s == "max_tokens" || s == "model_context_window_exceeded") return "length";
  if (s == "tool_use") return "tool_calls";
  if (s == "refusal") return "content_filter";
  if (s == "pause_turn") return "pause";
  return "other";
}

int anthropic_error_status(const std::string& type) {
  if (type == "overloaded_error") return 529;
  if (type == "rate_limit_error") return 429;
  if (type == "authentication_error") return 401;
  if (type == "permission_error") return 403;
  if (type == "not_found_error") return 404;
  if (type == "request_too_large") return 413;
  if (type == "invalid_request_error") return 400;
  return 500;  // api_error and anything new
}

namespace {

// A text block with a cache breakpoint: the prompt up to and including it is written
// to the cache (or read from it, when an earlier request wrote the same prefix).
json cached_text(const std::string& text) {
  return json::array(
      {{{"type", "text"}, {"text", text}, {"cache_control", {{"type", "ephemeral"}}}}});
}

}  // namespace

std::string anthropic_request_body(const ProviderConfig& cfg, const Request& req, bool stream) {
  json j;
  j["model"] = cfg.model;
  j["max_tokens"] = output_cap(req, cfg.max_tokens);
  std::string system;
  json msgs = json::array();
  size_t first_user = std::string::npos;
  for (const Message& m : req.messages) {
    if (m.role == "system") {  // the API takes the system prompt apart from the turns
      if (!system.empty()) system += "\n\n";
      system += m.content;
    } else {
      if (m.role == "user" && first_user == std::string::npos) first_user = msgs.size();
      msgs.push_back({{"role", m.role}, {"content", m.content}});
    }
  }
  // Three breakpoints of the four the API allows: the system prompt, the first user
  // message (the task: the problem, the baseline and the docs, the same every turn) and
  // the last message, so that the next turn reads the whole conversation so far from
  // the cache and pays full price only for what it adds. Between turns only where the
  // breakpoints sit changes; the text of every block stays as it was (the cache keys on it).
  if (cfg.prompt_cache) {
    if (!system.empty()) j["system"] = cached_text(system);
    auto mark = [&](size_t i) {
      json& m = msgs[i];
      if (m["role"] == "user" && m["content"].is_string() &&
          !m["content"].get<std::string>().empty())
        m["content"] = cached_text(m["content"].get<std::string>());
    };
    if (first_user != std::string::npos) mark(first_user);
    if (!msgs.empty()) mark(msgs.size() - 1);
  } else if (!system.empty()) {
    j["system"] = system;
  }
  j["messages"] = std::move(msgs);
  if (auto t = req.temperature ? req.temperature : cfg.temperature) j["temperature"] = *t;
  if (stream) j["stream"] = true;
  return j.dump();
}

ApiError anthropic_parse_error(const std::string& body) {
  ApiError a;
  json j = json::parse(body, nullptr, false);
  const json* e = j.is_discarded() ? nullptr : jobj(j, "error");
  if (!e) {
    a.message = snippet(body);
    return a;
  }
  a.parsed = true;
  a.type = jstr(*e, "type");
  a.message = jstr(*e, "message");
  if (const json* d = jobj(*e, "details")) a.code = jstr(*d, "error_code");
  return a;
}

bool anthropic_parse_reply(const std::string& body, Reply* reply, std::string* what) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    *what = "the body is not valid JSON (truncated?)";
    return false;
  }
  if (!j.contains("content") || !j["content"].is_array()) {
    *what = "no content[] in the message";
    return false;
  }
  for (const json& b : j["content"]) {
    std::string type = jstr(b, "type");
    if (type == "text")
      reply->text += jstr(b, "text");
    else if (type == "thinking")
      reply->thinking += jstr(b, "thinking");
  }
  reply->raw_stop_reason = jstr(j, "stop_reason");
  reply->stop_reason = anthropic_stop_reason(reply->raw_stop_reason);
  reply->model = jstr(j, "model");
  if (reply->request_id.empty()) reply->request_id = jstr(j, "id");
  if (j.contains("usage")) parse_usage(j["usage"], reply);
  return true;
}

bool AnthropicStream::failed(ApiError* api, int* status) const {
  if (!failed_) return false;
  *api = error_;
  *status = anthropic_error_status(error_.type);  // its type says whether to retry
  return true;
}

void AnthropicStream::on_event(const SseEvent& ev, Reply* reply) {
  json j = json::parse(ev.data, nullptr, false);
  if (j.is_discarded()) {
    if (bad.empty()) bad = ev.data;
    return;
  }
  std::string type = ev.event.empty() ? jstr(j, "type") : ev.event;
  if (type == "message_start") {
    if (const json* m = jobj(j, "message")) {
      reply->model = jstr(*m, "model");
      if (reply->request_id.empty()) reply->request_id = jstr(*m, "id");
      if (m->contains("usage")) parse_usage((*m)["usage"], reply);
    }
  } else if (type == "content_block_start") {
    if (const json* b = jobj(j, "content_block")) {
      if (jstr(*b, "type") == "text" && !jstr(*b, "text").empty()) {
        reply->text += jstr(*b, "text");
        if (req_.on_delta) req_.on_delta(jstr(*b, "text"));
      }
    }
  } else if (type == "content_block_delta") {
    const json* d = jobj(j, "delta");
    if (!d) return;
    std::string dt = jstr(*d, "type");
    if (dt == "text_delta") {
      std::string t = jstr(*d, "text");
      reply->text += t;
      if (req_.on_delta && !t.empty()) req_.on_delta(t);
    } else if (dt == "thinking_delta") {
      reply->thinking += jstr(*d, "thinking");  // counted apart, never in the text
    }
  } else if (type == "message_delta") {
    if (const json* d = jobj(j, "delta")) {
      std::string s = jstr(*d, "stop_reason");
      if (!s.empty()) {
        reply->raw_stop_reason = s;
        reply->stop_reason = anthropic_stop_reason(s);
      }
    }
    if (j.contains("usage")) {
      parse_usage(j["usage"], reply);
      if (req_.on_tokens) req_.on_tokens(reply->usage.output_tokens);
    }
  } else if (type == "message_stop") {
    stopped_ = true;
  } else if (type == "error") {
    failed_ = true;
    error_ = anthropic_parse_error(ev.data);
  }
  // ping, content_block_stop and event types added later are ignored.
}

namespace {

class AnthropicWire : public Wire {
 public:
  explicit AnthropicWire(ProviderConfig cfg) : cfg_(std::move(cfg)) {}
  std::string url(const std::string& base) const override {
    // The SDK's base URL has no /v1; accept one given the OpenAI way too.
    bool has_v1 = base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0;
    return base + (has_v1 ? "/messages" : "/v1/messages");
  }
  std::vector<std::string> headers(const std::string& key) const override {
    std::vector<std::string> h = {"Content-Type: application/json",
                                  "anthropic-version: " + cfg_.anthropic_version};
    if (!key.empty()) h.push_back("x-api-key: " + key);
    return h;
  }
  std::string body(const Request& req, bool stream) const override {
    return anthropic_request_body(cfg_, req, stream);
  }
  bool parse_reply(const std::string& body, Reply* reply, std::string* what) const override {
    return anthropic_parse_reply(body, reply, what);
  }
  // A spend limit (429, error.details.error_code enforced_spend_limit_reached) and a low
  // credit balance (400) come out as quota in error_from_status: waiting will not help.
  ApiError parse_error(const std::string& body) const override {
    return anthropic_parse_error(body);
  }
  std::unique_ptr<WireStream> stream(const Request& req) const override {
    return std::make_unique<AnthropicStream>(req);
  }
  const char* request_id_header() const override { return "request-id"; }

 private:
  ProviderConfig cfg_;
};

}  // namespace

std::unique_ptr<Wire> make_anthropic_wire(const ProviderConfig& cfg) {
  return std::make_unique<AnthropicWire>(cfg);
}

}  // namespace llm
