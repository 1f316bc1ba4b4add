// tests/fake_llm/prompt_cache.cpp: see prompt_cache.h.
#include "prompt_cache.h"

#include <algorithm>

using nlohmann::json;

namespace fake_llm {

namespace {

long tokens(size_t bytes) {
  return static_cast<long>(bytes / 4);
}

// The prompt as the cache sees it: every content block's text in order, each after its
// role, and where each block ends and whether it carries cache_control.
struct Prompt {
  std::string text;
  std::vector<size_t> ends;
  std::vector<const json*> marks;  // the block's cache_control, or null
};

void add_block(const std::string& role, const json& block, Prompt* p) {
  p->text += "\x1e" + role + "\x1f";
  if (block.is_string())
    p->text += block.get<std::string>();
  else if (block.is_object() && block.value("type", "") == "text" && block.contains("text") &&
           block["text"].is_string())
    p->text += block["text"].get<std::string>();
  else
    p->text += block.dump();
  p->ends.push_back(p->text.size());
  const json* mark = nullptr;
  if (block.is_object() && block.contains("cache_control")) mark = &block["cache_control"];
  p->marks.push_back(mark);
}

void add_content(const std::string& role, const json& content, Prompt* p) {
  if (content.is_array()) {
    for (const json& b : content) add_block(role, b, p);
  } else {
    add_block(role, content, p);
  }
}

bool valid_mark(const json& m) {
  if (!m.is_object() || m.value("type", "") != "ephemeral") return false;
  if (!m.contains("ttl")) return true;
  return m["ttl"] == "5m" || m["ttl"] == "1h";
}

}  // namespace

bool PromptCache::anthropic_usage(const json& body, json* usage, std::string* error) {
  Prompt p;
  if (body.contains("system")) add_content("system", body["system"], &p);
  if (body.contains("messages") && body["messages"].is_array())
    for (const json& m : body["messages"])
      if (m.is_object() && m.contains("content"))
        add_content(m.value("role", ""), m["content"], &p);
  std::vector<size_t> breakpoints;
  for (size_t i = 0; i < p.marks.size(); ++i) {
    if (!p.marks[i]) continue;
    if (!valid_mark(*p.marks[i])) {
      *error =
          "cache_control: expected {\"type\": \"ephemeral\"} with an optional ttl of "
          "\"5m\" or \"1h\", got " +
          p.marks[i]->dump();
      return false;
    }
    breakpoints.push_back(i);
  }
  if (breakpoints.size() > 4) {
    *error = "A maximum of 4 blocks with cache_control may be provided. Found " +
             std::to_string(breakpoints.size()) + ".";
    return false;
  }
  auto written = [&](size_t end) {
    return std::find(written_.begin(), written_.end(), p.text.substr(0, end)) != written_.end();
  };
  size_t read = 0, last = 0;
  for (size_t b : breakpoints) {
    for (size_t i = b >= 20 ? b - 20 : 0; i <= b; ++i)
      if (p.ends[i] > read && written(p.ends[i])) read = p.ends[i];
    if (tokens(p.ends[b]) >= min_tokens_) last = std::max(last, p.ends[b]);
  }
  size_t write = last > read ? last - read : 0;
  for (size_t b : breakpoints)
    if (tokens(p.ends[b]) >= min_tokens_ && !written(p.ends[b]))
      written_.push_back(p.text.substr(0, p.ends[b]));
  long in = tokens(p.text.size()) - tokens(read) - tokens(write);
  *usage = {{"input_tokens", in},
            {"cache_creation_input_tokens", tokens(write)},
            {"cache_read_input_tokens", tokens(read)},
            {"cache_creation",
             {{"ephemeral_5m_input_tokens", tokens(write)}, {"ephemeral_1h_input_tokens", 0}}}};
  return true;
}

json PromptCache::openai_usage(const json& body) {
  Prompt p;
  if (body.contains("messages") && body["messages"].is_array())
    for (const json& m : body["messages"])
      if (m.is_object() && m.contains("content"))
        add_content(m.value("role", ""), m["content"], &p);
  size_t shared = 0;
  for (const std::string& s : seen_) {
    size_t n = 0, most = std::min(s.size(), p.text.size());
    while (n < most && s[n] == p.text[n]) ++n;
    shared = std::max(shared, n);
  }
  seen_.push_back(p.text);
  long total = tokens(p.text.size()), hit = tokens(shared), cached = 0;
  if (total >= min_tokens_ && hit >= min_tokens_)
    cached = min_tokens_ + (hit - min_tokens_) / 128 * 128;
  return {{"prompt_tokens", total}, {"prompt_tokens_details", {{"cached_tokens", cached}}}};
}

}  // namespace fake_llm
