// src/llm/openai.cpp: see openai.h.
#include "llm/openai.h"

#include <fmt/format.h>

#include <mutex>

namespace llm {

using nlohmann::json;

namespace {

void parse_usage(const json& u, Reply* reply) {
  if (!u.is_object()) return;
  Usage& us = reply->usage;
  us.reported = true;
  us.input_tokens = jint(u, "prompt_tokens");
  us.output_tokens = jint(u, "completion_tokens");
  if (const json* d = jobj(u, "prompt_tokens_details"))
    us.cache_read_tokens = jint(*d, "cached_tokens");
  if (const json* d = jobj(u, "completion_tokens_details"))
    us.reasoning_tokens = jint(*d, "reasoning_tokens");
}

// Servers that expose reasoning text call it reasoning_content (vLLM, DeepSeek) or
// reasoning (OpenRouter, Ollama).
std::string reasoning_of(const json& m) {
  std::string r = jstr(m, "reasoning_content");
  return r.empty() ? jstr(m, "reasoning") : r;
}

}  // namespace

std::string openai_stop_reason(const std::string& f) {
  if (f == "stop" || f == "length" || f == "tool_calls" || f == "content_filter") return f;
  if (f == "function_call") return "tool_calls";
  return "other";
}

std::string openai_request_body(const ProviderConfig& cfg, const Request& req,
                                const std::string& max_field, bool stream) {
  json j;
  j["model"] = cfg.model;
  json msgs = json::array();
  for (const Message& m : req.messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
  j["messages"] = std::move(msgs);
  j[max_field] = output_cap(req, cfg.max_tokens);
  if (auto t = req.temperature ? req.temperature : cfg.temperature) j["temperature"] = *t;
  if (req.seed) j["seed"] = *req.seed;
  if (stream) {
    j["stream"] = true;
    j["stream_options"] = {{"include_usage", true}};
  }
  return j.dump();
}

ApiError openai_parse_error(const std::string& body) {
  ApiError a;
  json j = json::parse(body, nullptr, false);
  const json* e = j.is_discarded() ? nullptr : jobj(j, "error");
  if (!e) {
    // Some servers answer {"message": ...} or {"detail": ...}, or plain text.
    a.message = !j.is_discarded() && !jstr(j, "message").empty()  ? jstr(j, "message")
                : !j.is_discarded() && !jstr(j, "detail").empty() ? jstr(j, "detail")
                                                                  : snippet(body);
    return a;
  }
  a.parsed = true;
  a.message = jstr(*e, "message");
  a.type = jstr(*e, "type");
  a.param = jstr(*e, "param");
  a.code = jstr(*e, "code");
  return a;
}

bool openai_parse_reply(const std::string& body, Reply* reply, std::string* what) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    *what = "the body is not valid JSON (truncated?)";
    return false;
  }
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() ||
      !jobj(j["choices"][0], "message")) {
    *what = "no choices[0].message in the reply";
    return false;
  }
  const json& c = j["choices"][0];
  const json& m = c["message"];
  reply->text = jstr(m, "content");  // null when the model only refused or called tools
  reply->thinking = reasoning_of(m);
  if (reply->text.empty()) reply->text = jstr(m, "refusal");
  reply->raw_stop_reason = jstr(c, "finish_reason");
  reply->stop_reason = openai_stop_reason(reply->raw_stop_reason);
  reply->model = jstr(j, "model");
  if (reply->request_id.empty()) reply->request_id = jstr(j, "id");
  if (j.contains("usage")) parse_usage(j["usage"], reply);
  return true;
}

bool OpenAIStream::failed(ApiError* api, int* status) const {
  if (error_.message.empty() && !error_.parsed) return false;
  *api = error_;
  int code = std::atoi(error_.code.c_str());  // vLLM sends the HTTP status as the code
  *status = code >= 400 ? code : 500;
  return true;
}

void OpenAIStream::on_event(const SseEvent& ev, Reply* reply) {
  if (ev.data == "[DONE]") {
    done_ = true;
    return;
  }
  json j = json::parse(ev.data, nullptr, false);
  if (j.is_discarded()) {
    if (bad.empty()) bad = ev.data;
    return;
  }
  if (const json* e = jobj(j, "error")) {  // vLLM and others report failures in-stream
    error_ = openai_parse_error(json{{"error", *e}}.dump());
    return;
  }
  if (reply->model.empty()) reply->model = jstr(j, "model");
  if (reply->request_id.empty()) reply->request_id = jstr(j, "id");
  if (j.contains("usage") && j["usage"].is_object()) {
    parse_usage(j["usage"], reply);
    if (req_.on_tokens) req_.on_tokens(reply->usage.output_tokens);
  }
  if (!j.contains("choices") || !j["choices"].is_array()) return;
  for (const json& c : j["choices"]) {
    if (const json* d = jobj(c, "delta")) {
      std::string text = jstr(*d, "content");
      if (!text.empty()) {
        reply->text += text;
        if (req_.on_delta) req_.on_delta(text);
      }
      reply->thinking += reasoning_of(*d);
    }
    std::string f = jstr(c, "finish_reason");
    if (!f.empty()) {
      finished_ = true;
      reply->raw_stop_reason = f;
      reply->stop_reason = openai_stop_reason(f);
    }
  }
}

namespace {

class OpenAIWire : public Wire {
 public:
  explicit OpenAIWire(ProviderConfig cfg) : cfg_(std::move(cfg)) {
    max_field_ = cfg_.max_tokens_field == "max_tokens" ? "max_tokens" : "max_completion_tokens";
  }
  // The client appends /chat/completions to the base URL as given, so an
  // OpenAI-compatible server's base URL ends in /v1 (http://localhost:8000/v1).
  std::string url(const std::string& base) const override { return base + "/chat/completions"; }
  std::vector<std::string> headers(const std::string& key) const override {
    std::vector<std::string> h = {"Content-Type: application/json"};
    if (!key.empty()) h.push_back("Authorization: Bearer " + key);
    return h;
  }
  std::string body(const Request& req, bool stream) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return openai_request_body(cfg_, req, max_field_, stream);
  }
  bool parse_reply(const std::string& body, Reply* reply, std::string* what) const override {
    return openai_parse_reply(body, reply, what);
  }
  ApiError parse_error(const std::string& body) const override { return openai_parse_error(body); }
  std::unique_ptr<WireStream> stream(const Request& req) const override {
    return std::make_unique<OpenAIStream>(req);
  }
  const char* request_id_header() const override { return "x-request-id"; }
  // The two names of the output cap: some models take only the new one, some servers
  // only the old one. Switch on the 400 that names the one sent, and keep the switch.
  bool rephrase(int status, const ApiError& api) override {
    bool unsupported = api.code == "unsupported_parameter" ||
                       api.message.find("nsupported parameter") != std::string::npos;
    std::lock_guard<std::mutex> lock(mu_);
    if (status != 400 || !unsupported ||
        (api.param != max_field_ && api.message.find("'" + max_field_ + "'") == std::string::npos))
      return false;
    max_field_ = max_field_ == "max_tokens" ? "max_completion_tokens" : "max_tokens";
    return true;
  }

 private:
  ProviderConfig cfg_;
  mutable std::mutex mu_;
  std::string max_field_;
};

}  // namespace

std::unique_ptr<Wire> make_openai_wire(const ProviderConfig& cfg) {
  return std::make_unique<OpenAIWire>(cfg);
}

}  // namespace llm
