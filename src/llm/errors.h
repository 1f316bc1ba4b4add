// src/llm/errors.h: turning what went wrong on the wire into an llm::Error whose
// message names the input (URL, model, key variable) and says what to do. Shared by
// both wire formats; each parses its own error body into an ApiError first.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "llm/http.h"
#include "llm/provider.h"

namespace llm {

// What the call was, for messages.
struct CallContext {
  std::string provider;  // "openai", "together", ...
  std::string model;
  std::string url;
  std::string key_env;  // "" when no key is sent
};

// An error body, whatever the wire format (OpenAI: error.{message,type,param,code};
// Anthropic: error.{type,message}, error.details.error_code).
struct ApiError {
  bool parsed = false;
  std::string type, code, param, message;
};

// The first n bytes of s, printable (control bytes escaped), with a note when cut.
std::string snippet(const std::string& s, size_t n = 200);

// Maps a non-2xx response. quota is never retried; otherwise retryable follows
// should_retry() (x-should-retry, 408/409/429/5xx).
Error error_from_status(int status, const ApiError& api, const Headers& headers,
                        const CallContext& ctx);

// Maps a transport failure (no complete response).
Error error_from_fault(const HttpResponse& resp, const CallContext& ctx);

// A body that is not what the wire format promises (invalid JSON, missing fields).
Error bad_response(const std::string& what, const std::string& body, const CallContext& ctx,
                   bool retryable = false);

// The API key from the environment variable named, or an Error missing_key.
bool read_key(const CallContext& ctx, std::string* key, Error* err);

// Lenient field access: "" / 0 when absent or of another type.
std::string jstr(const nlohmann::json& j, const char* key);
int64_t jint(const nlohmann::json& j, const char* key);
const nlohmann::json* jobj(const nlohmann::json& j, const char* key);

}  // namespace llm
