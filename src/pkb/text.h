// pkb/text.h: the text helpers the PKB evaluator's files share.
#pragma once

#include <cctype>
#include <string>

#include "sandbox/text.h"

namespace pkb {

// The whole file; "" where it cannot be read (a rank that never wrote its report).
using sandbox::read_text;

// The last n characters of s, marked as cut where they are not all of it.
inline std::string tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

// s without its trailing whitespace (a file's or a traceback's last newline).
inline std::string trim_end(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

}  // namespace pkb
