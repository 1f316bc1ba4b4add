// sandbox/build_log.cpp: what a build tells the person in words: BuildResult::summary's
// one line, and trim_compiler_log, a compiler's output cut to its first errors.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "build.h"

namespace sandbox {

namespace {

bool is_error_line(const std::string& l) {
  return l.find("error") != std::string::npos || l.find("Error") != std::string::npos;
}

}  // namespace

std::string BuildResult::summary() const {
  if (ok) return "built " + lib_path + (cached ? " (cached)" : "");
  if (!findings.empty()) {
    std::string s = std::string(status_name(status)) + ": " + findings[0].render();
    if (findings.size() > 1) s += " (and " + std::to_string(findings.size() - 1) + " more)";
    return s;
  }
  std::string first = log.substr(0, log.find('\n'));
  std::istringstream in(log);
  std::string l;
  while (std::getline(in, l))
    if (is_error_line(l)) {
      first = l;
      break;
    }
  return std::string(status_name(status)) + ": " + first;
}

std::string trim_compiler_log(const std::string& log, const std::string& tmp_path,
                              const std::string& file_name, size_t max_lines) {
  std::string text = log;
  for (size_t p; !tmp_path.empty() && (p = text.find(tmp_path)) != std::string::npos;)
    text.replace(p, tmp_path.size(), file_name);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  if (lines.size() <= max_lines) return text;
  // Start a little before the first error: g++ names the function there.
  size_t first = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    if (is_error_line(lines[i])) {
      first = i >= 2 ? i - 2 : 0;
      break;
    }
  size_t end = std::min(lines.size(), first + max_lines);
  std::string out;
  if (first > 0) out += fmt::format("[{} lines before the first error cut]\n", first);
  for (size_t i = first; i < end; ++i) out += lines[i] + "\n";
  if (end < lines.size()) out += fmt::format("[{} more lines cut]\n", lines.size() - end);
  return out;
}

}  // namespace sandbox
