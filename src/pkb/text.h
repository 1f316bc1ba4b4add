// pkb/text.h: the two text helpers the PKB evaluator's files share.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace pkb {

// The whole file; "" where it cannot be read (a rank that never wrote its report).
inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The last n characters of s, marked as cut where they are not all of it.
inline std::string tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

}  // namespace pkb
