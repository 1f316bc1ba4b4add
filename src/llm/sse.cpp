// src/llm/sse.cpp: see sse.h.
#include "llm/sse.h"

namespace llm {

void SseParser::feed(std::string_view bytes, std::vector<SseEvent>* out) {
  for (char c : bytes) {
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;  // the second half of \r\n
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = (c == '\r');
      std::string l;
      l.swap(line_);
      if (first_ && l.rfind("\xEF\xBB\xBF", 0) == 0) l.erase(0, 3);
      first_ = false;
      line(l, out);
      continue;
    }
    line_.push_back(c);
  }
}

void SseParser::line(std::string_view l, std::vector<SseEvent>* out) {
  if (l.empty()) {
    // A blank line dispatches; an event without data is dropped, as the spec says.
    if (has_data_) out->push_back(cur_);
    cur_ = SseEvent{};
    has_data_ = false;
    pending_ = false;
    return;
  }
  if (l[0] == ':') return;  // a comment (servers send these as keep-alives)
  pending_ = true;
  std::string_view field = l, value;
  size_t colon = l.find(':');
  if (colon != std::string_view::npos) {
    field = l.substr(0, colon);
    value = l.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) cur_.data.push_back('\n');
    cur_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    cur_.event.assign(value);
  } else if (field == "id") {
    cur_.id.assign(value);
  }
  // retry: and unknown fields are ignored.
}

bool SseParser::finish() const {
  return pending_ || !line_.empty();
}

}  // namespace llm
