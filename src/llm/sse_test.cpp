#include "llm/sse.h"

#include <doctest/doctest.h>

namespace llm {

namespace {

std::vector<SseEvent> parse_in_pieces(const std::string& s, std::vector<size_t> cuts) {
  SseParser p;
  std::vector<SseEvent> out;
  size_t at = 0;
  for (size_t c : cuts) {
    p.feed(std::string_view(s).substr(at, c - at), &out);
    at = c;
  }
  p.feed(std::string_view(s).substr(at), &out);
  return out;
}

// A recorded Anthropic stream, with \r\n line ends, a comment, a multi-byte character
// and a multi-line data field.
const std::string kAnthropic =
    "event: message_start\r\n"
    "data: {\"type\":\"message_start\"}\r\n\r\n"
    ": keep-alive\r\n\r\n"
    "event: content_block_delta\r\n"
    "data: {\"text\":\"h\xC3\xA9llo \xE2\x82\xAC\"}\r\n\r\n"
    "event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n"
    "data: line one\r\ndata: line two\r\n\r\n"
    "event: message_stop\r\ndata: {}\r\n\r\n";

void check_anthropic(const std::vector<SseEvent>& ev) {
  REQUIRE(ev.size() == 5);
  CHECK(ev[0].event == "message_start");
  CHECK(ev[0].data == "{\"type\":\"message_start\"}");
  CHECK(ev[1].event == "content_block_delta");
  CHECK(ev[1].data == "{\"text\":\"h\xC3\xA9llo \xE2\x82\xAC\"}");
  CHECK(ev[2].event == "ping");
  CHECK(ev[3].event == "");
  CHECK(ev[3].data == "line one\nline two");
  CHECK(ev[4].event == "message_stop");
}

}  // namespace

TEST_CASE("llm sse: a whole stream at once") {
  check_anthropic(parse_in_pieces(kAnthropic, {}));
}

TEST_CASE("llm sse: every single split point gives the same events") {
  for (size_t i = 0; i <= kAnthropic.size(); ++i) {
    CAPTURE(i);
    check_anthropic(parse_in_pieces(kAnthropic, {i}));
  }
}

TEST_CASE("llm sse: every pair of split points on an OpenAI stream") {
  const std::string s =
      "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
      "data: {\"choices\":[],\"usage\":{}}\n\n"
      "data: [DONE]\n\n";
  for (size_t i = 0; i <= s.size(); ++i)
    for (size_t j = i; j <= s.size(); ++j) {
      auto ev = parse_in_pieces(s, {i, j});
      REQUIRE(ev.size() == 3);
      CHECK(ev[0].data == "{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}");
      CHECK(ev[2].data == "[DONE]");
    }
}

TEST_CASE("llm sse: one byte at a time") {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < kAnthropic.size(); ++i) cuts.push_back(i);
  check_anthropic(parse_in_pieces(kAnthropic, cuts));
}

TEST_CASE("llm sse: fields without a space, bare CR line ends, a BOM, no data") {
  auto ev = parse_in_pieces(
      "\xEF\xBB\xBF"
      "event:x\rdata:1\r\rid: 7\revent: y\r\r",
      {});
  REQUIRE(ev.size() == 1);  // the second event has no data and is dropped
  CHECK(ev[0].event == "x");
  CHECK(ev[0].data == "1");
}

TEST_CASE("llm sse: an unfinished event is reported at the end") {
  SseParser p;
  std::vector<SseEvent> out;
  p.feed("data: {\"a\":1}\n\ndata: {\"b\"", &out);
  CHECK(out.size() == 1);
  CHECK(p.finish());
  SseParser q;
  q.feed("data: 1\n\n", &out);
  CHECK_FALSE(q.finish());
}

}  // namespace llm
