// tests/fake_llm/prompt_cache.h: the two APIs' prompt caches as fake_llm_server plays
// them, so that a test sees the usage a real server would report for the requests kforge
// sends (a step with "cache": true). A token is 4 bytes of the prompt's text here.
//
// Anthropic (explicit): a content block with cache_control {"type": "ephemeral"} is a
// breakpoint; the prompt up to and including it (system, then messages, in order) is
// written to the cache when it is at least min_tokens long. A later request reads the
// longest prefix that ends at one of its block boundaries, at most 20 blocks before one
// of its breakpoints, and was written before: cache_read_input_tokens; what lies between
// that and its last cacheable breakpoint is written: cache_creation_input_tokens; the
// rest is input_tokens. More than 4 breakpoints, or a cache_control that is not
// {"type": "ephemeral"} (ttl 5m or 1h), is the 400 the API answers.
//
// OpenAI (automatic): the longest prefix of the messages' text shared with any earlier
// request is cached, counted when the prompt is at least 1024 tokens, in steps of 128
// tokens from 1024 (usage.prompt_tokens_details.cached_tokens).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fake_llm {

class PromptCache {
 public:
  explicit PromptCache(long min_tokens = 1024) : min_tokens_(min_tokens) {}

  // The usage fields for an Anthropic request body: input_tokens,
  // cache_creation_input_tokens, cache_read_input_tokens, cache_creation. False with
  // *error (the API's message) when the request's cache_control is invalid.
  bool anthropic_usage(const nlohmann::json& body, nlohmann::json* usage, std::string* error);

  // The usage fields for an OpenAI chat request body: prompt_tokens and
  // prompt_tokens_details.cached_tokens.
  nlohmann::json openai_usage(const nlohmann::json& body);

 private:
  long min_tokens_;
  std::vector<std::string> written_;  // Anthropic: the prefixes written at breakpoints
  std::vector<std::string> seen_;     // OpenAI: every earlier prompt
};

}  // namespace fake_llm
