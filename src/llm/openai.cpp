// src/llm/openai.cpp: see openai.h.
#include "llm/openai.h"

#include <fmt/format.h>

#include "llm/client.h"

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

void OpenAIStream::on_event(const SseEvent& ev, Reply* reply) {
  ++events_;
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

OpenAIProvider::OpenAIProvider(ProviderConfig cfg) : cfg_(std::move(cfg)) {
  ProviderDefaults d;
  provider_defaults(cfg_.provider, &d);
  if (cfg_.base_url.empty()) cfg_.base_url = d.base_url;
  if (cfg_.api_key_env.empty()) cfg_.api_key_env = d.api_key_env;
  ctx_.provider = cfg_.provider;
  ctx_.model = cfg_.model;
  ctx_.url = trim_url(cfg_.base_url) + "/chat/completions";
  ctx_.key_env = cfg_.api_key_env == "none" ? "" : cfg_.api_key_env;
  max_field_ = cfg_.max_tokens_field == "max_tokens" ? "max_tokens" : "max_completion_tokens";
}

bool OpenAIProvider::ready(Error* err) const {
  std::string key;
  return read_key(ctx_, &key, err);
}

bool OpenAIProvider::complete(const Request& req, Reply* reply, Error* err) {
  *reply = Reply{};
  std::string key;
  if (!read_key(ctx_, &key, err)) return false;
  bool stream = req.stream.value_or(cfg_.stream);
  std::string field;
  {
    std::lock_guard<std::mutex> lock(mu_);
    field = max_field_;
  }
  bool ok = run_with_retries(
      cfg_, req,
      [&](Reply* r, Error* e, Headers* h) { return attempt(req, &field, stream, r, e, h); }, reply,
      err);
  if (ok) account_cost(cfg_, reply);
  return ok;
}

bool OpenAIProvider::attempt(const Request& req, std::string* max_field, bool stream, Reply* reply,
                             Error* err, Headers* headers) {
  std::string key;
  if (!read_key(ctx_, &key, err)) return false;
  for (bool fell_back = false;;) {
    HttpRequest hr;
    hr.url = ctx_.url;
    hr.headers = {"Content-Type: application/json"};
    if (!key.empty()) hr.headers.push_back("Authorization: Bearer " + key);
    hr.body = openai_request_body(cfg_, req, *max_field, stream);
    Reply r;
    OpenAIStream st(req);
    std::string raw;
    HttpResponse resp;
    if (!post_once(
            cfg_, ctx_, std::move(hr), stream, [&](const SseEvent& ev) { st.on_event(ev, &r); },
            &raw, &resp, reply, headers, err))
      return false;
    if (resp.status < 200 || resp.status >= 300) {
      ApiError api = openai_parse_error(resp.body);
      // The two names of the output cap: some models take only the new one, some
      // servers only the old one. Switch once, and keep the switch for later calls.
      bool unsupported = api.code == "unsupported_parameter" ||
                         api.message.find("nsupported parameter") != std::string::npos;
      if (resp.status == 400 && unsupported && !fell_back &&
          (api.param == *max_field ||
           api.message.find("'" + *max_field + "'") != std::string::npos)) {
        *max_field = *max_field == "max_tokens" ? "max_completion_tokens" : "max_tokens";
        {
          std::lock_guard<std::mutex> lock(mu_);
          max_field_ = *max_field;
        }
        fell_back = true;
        continue;
      }
      *err = error_from_status(resp.status, api, resp.headers, ctx_);
      return false;
    }
    r.attempts = reply->attempts;
    auto hid = resp.headers.find("x-request-id");
    if (hid != resp.headers.end()) r.request_id = hid->second;
    std::string what;
    if (stream && st.events() == 0 && !raw.empty() && raw[0] == '{') {
      // A server that ignored "stream": a plain completion.
      if (!openai_parse_reply(raw, &r, &what)) {
        *err = bad_response(what, raw, ctx_);
        return false;
      }
    } else if (stream) {
      if (st.failed()) {
        int status = std::atoi(st.error().code.c_str());
        *err = error_from_status(status >= 400 ? status : 500, st.error(), resp.headers, ctx_);
        err->message = "mid-stream: " + err->message;
        return false;
      }
      if (!st.bad.empty()) {
        *err = bad_response("a stream event's data is not JSON", st.bad, ctx_);
        return false;
      }
      if (!st.done() && !st.finished()) {
        *err = bad_response("the stream ended before a finish_reason or [DONE]", raw, ctx_, true);
        return false;
      }
    } else if (!openai_parse_reply(resp.body, &r, &what)) {
      *err = bad_response(what, resp.body, ctx_);
      return false;
    }
    if (r.model.empty()) r.model = cfg_.model;
    *reply = std::move(r);
    return true;
  }
}

}  // namespace llm
