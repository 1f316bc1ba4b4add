// src/llm/errors.cpp: see errors.h.
#include "llm/errors.h"

#include <fmt/format.h>

#include <cstdlib>

#include "sandbox/secrets.h"

namespace llm {

using nlohmann::json;

std::string snippet(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  if (s.size() > n) out += fmt::format("... ({} bytes in all)", s.size());
  if (s.empty()) out = "(empty)";
  return out;
}

namespace {

bool contains(const std::string& s, const char* what) {
  return s.find(what) != std::string::npos;
}

bool is_quota(const ApiError& a) {
  return a.code == "insufficient_quota" || a.type == "insufficient_quota" ||
         contains(a.code, "spend_limit") || contains(a.message, "credit balance") ||
         contains(a.message, "exceeded your current quota") || contains(a.message, "spend limit");
}

std::string said(int status, const ApiError& a) {
  std::string s = fmt::format("HTTP {}", status);
  if (!a.message.empty()) s += ": " + a.message;
  return s;
}

}  // namespace

Error error_from_status(int status, const ApiError& api, const Headers& headers,
                        const CallContext& ctx) {
  Error e;
  e.http_status = status;
  e.retryable = should_retry(status, headers, false);
  std::string what = said(status, api);
  std::string key = ctx.key_env.empty() ? "the API key" : ctx.key_env;
  if (is_quota(api)) {
    e.kind = ErrorKind::quota;
    e.retryable = false;  // waiting does not refill a quota (the SDKs retry it anyway)
    e.message = fmt::format(
        "{} quota exhausted for {} ({}): check the plan and billing of "
        "that account, or use another key or --model",
        ctx.provider, key, what);
  } else if (status == 401 || status == 403 || api.type == "authentication_error" ||
             api.type == "permission_error") {
    e.kind = ErrorKind::auth;
    e.message = fmt::format(
        "{} rejected the key in {} ({}): check that it is valid for {} "
        "and allowed to use model \"{}\"",
        ctx.url, key, what, ctx.provider, ctx.model);
  } else if (status == 404 || api.code == "model_not_found" || api.type == "not_found_error") {
    e.kind = ErrorKind::not_found;
    e.message = fmt::format(
        "model \"{}\" not found at {} ({}): check --model (and "
        "--base-url)",
        ctx.model, ctx.url, what);
  } else if (status == 429) {
    e.kind = ErrorKind::rate_limited;
    // One run makes one call at a time: what is left to do is wait, or get a higher limit.
    // (A sweep, which runs samples at once, adds its own advice: sweep/outcome.cpp.)
    e.message = fmt::format(
        "rate limited by {} ({}): {} has used up its requests or tokens per minute", ctx.provider,
        what, ctx.key_env.empty() ? std::string("this client") : "the key in " + ctx.key_env);
    e.advice = "wait a minute and run again, or ask the provider for a higher rate limit";
  } else if (status == 529 || api.type == "overloaded_error") {
    e.kind = ErrorKind::overloaded;
    e.message = fmt::format("{} is overloaded ({}): this is load on the provider's side",
                            ctx.provider, what);
    e.advice = "try again later";
  } else if (status == 408) {
    e.kind = ErrorKind::timeout;
    e.message = fmt::format("{} timed out the request ({})", ctx.url, what);
  } else if (status >= 500) {
    e.kind = ErrorKind::server;
    e.message = fmt::format("{} failed on the server side ({})", ctx.url, what);
  } else {
    e.kind = ErrorKind::bad_request;
    e.message = fmt::format("{} refused the request ({}{}): check the model's parameters", ctx.url,
                            what, api.param.empty() ? "" : ", parameter " + api.param);
  }
  if (auto it = headers.find("x-request-id"); it != headers.end())
    e.message += " [request " + it->second + "]";
  else if (auto it2 = headers.find("request-id"); it2 != headers.end())
    e.message += " [request " + it2->second + "]";
  return e;
}

Error error_from_fault(const HttpResponse& resp, const CallContext& ctx) {
  Error e;
  e.http_status = resp.status;
  e.retryable = true;  // the SDKs retry connection errors and time-outs
  switch (resp.fault) {
    case HttpFault::connect_timeout:
      e.kind = ErrorKind::timeout;
      e.message = resp.fault_message + ": is the server up? (check --base-url, timeouts.connect_s)";
      break;
    case HttpFault::idle_timeout:
      e.kind = ErrorKind::timeout;
      e.message = resp.fault_message +
                  ": the server stalled (raise timeouts.idle_s if the "
                  "model is slow to start)";
      break;
    case HttpFault::total_timeout:
      e.kind = ErrorKind::timeout;
      e.message = resp.fault_message + " (raise timeouts.total_s for long replies)";
      break;
    case HttpFault::interrupted:
      e.kind = ErrorKind::interrupted;
      e.retryable = false;  // the person asked kforge to stop
      e.message = resp.fault_message;
      break;
    case HttpFault::deadline:
      e.kind = ErrorKind::deadline;
      e.retryable = false;  // no time is left to retry in
      e.message = resp.fault_message + " (--max-wall)";
      break;
    case HttpFault::partial_body:
      return bad_response(
          fmt::format("the connection closed mid-body after {} bytes", resp.body_bytes), resp.body,
          ctx, true);
    default:
      e.kind = ErrorKind::connection;
      e.message = resp.fault_message + ": check --base-url and the network";
  }
  return e;
}

Error bad_response(const std::string& what, const std::string& body, const CallContext& ctx,
                   bool retryable) {
  Error e;
  e.kind = ErrorKind::bad_response;
  e.retryable = retryable;
  e.message =
      fmt::format("{} ({}): {}; the body began: {}", ctx.url, ctx.provider, what, snippet(body));
  return e;
}

bool read_key(const CallContext& ctx, std::string* key, Error* err) {
  key->clear();
  if (ctx.key_env.empty()) return true;
  std::string v = sandbox::secret_env(ctx.key_env);
  if (!v.empty()) {
    *key = v;
    return true;
  }
  err->kind = ErrorKind::missing_key;
  err->retryable = false;
  err->http_status = 0;
  err->message = fmt::format(
      "{0} is not set: export it; for a local server that needs no key "
      "pass --api-key-env none (or set \"key_env\": {{\"{1}\": \"none\"}} "
      "in the config file); --model builtin runs without a model",
      ctx.key_env, ctx.provider);
  return false;
}

std::string jstr(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  if (it == j.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<int64_t>());  // llama.cpp codes
  return "";
}

int64_t jint(const json& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<int64_t>() : 0;
}

const json* jobj(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? &*it : nullptr;
}

}  // namespace llm
