// sandbox/text.h: the small text helpers several rooms of kforge need, written once:
// trimming white space, reading a whole file, grouping a count's digits. Header-only, so that
// kforge-rank, kforge-runner and kforge-confine use them without another source in their lists.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace sandbox {

// `s` without the white space (spaces, tabs, line ends) at either end.
inline std::string trim(std::string_view s) {
  constexpr std::string_view ws = " \t\r\n\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(ws) - b + 1));
}

// The whole file, byte for byte; "" where it cannot be read (a report a rank never
// wrote, a log a tool left out). Where a missing file must be told from an empty one,
// check for it first.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "1,234,567" (a token count, for people).
inline std::string group_digits(int64_t n) {
  std::string d = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace sandbox
