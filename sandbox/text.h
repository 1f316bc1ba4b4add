// sandbox/text.h: the two text helpers every room of kforge needs, written once: trimming
// white space and reading a whole file. Header-only, so that kforge-rank, kforge-runner
// and kforge-confine use them without another source in their lists.
#pragma once

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

}  // namespace sandbox
