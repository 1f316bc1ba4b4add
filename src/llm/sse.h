// src/llm/sse.h: an incremental Server-Sent Events parser (the WHATWG event-stream
// format). Bytes may arrive in any split: mid-line, mid-"data:", mid-UTF-8 sequence or
// between the \r and \n of a line end; nothing is dispatched before its blank line, so a
// consumer only ever sees whole events.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llm {

struct SseEvent {
  std::string event;  // "" when the stream gave no event: field (the spec's "message")
  std::string data;   // data: lines joined by '\n'
  std::string id;
};

class SseParser {
 public:
  // Appends every event completed by these bytes to *out.
  void feed(std::string_view bytes, std::vector<SseEvent>* out);
  // At the end of the stream: true when bytes of an unfinished event were left over
  // (the spec discards them; a caller may call the stream truncated).
  bool finish() const;

 private:
  void line(std::string_view l, std::vector<SseEvent>* out);

  std::string line_;       // the current, unfinished line
  bool after_cr_ = false;  // the last byte was '\r': a following '\n' ends nothing new
  bool first_ = true;      // a UTF-8 BOM may open the stream
  bool pending_ = false;   // fields seen since the last dispatch
  SseEvent cur_;
  bool has_data_ = false;
};

}  // namespace llm
