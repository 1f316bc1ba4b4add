// eval/sanitizer_log.cpp: see sanitizer_log.h.
#include "eval/sanitizer_log.h"

#include <cstdlib>
#include <regex>
#include <sstream>

namespace eval {

namespace {

const std::string kPrefix = "=========";

// The line without the sanitizer's prefix; false for a line that has none.
bool strip_prefix(const std::string& line, std::string* body) {
  size_t at = line.find(kPrefix);
  if (at == std::string::npos) return false;
  size_t i = at + kPrefix.size();
  if (i < line.size() && line[i] == ' ') ++i;
  *body = line.substr(i);
  while (!body->empty() && (body->back() == '\r' || body->back() == ' ')) body->pop_back();
  return true;
}

bool starts_with(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}

// A line that ends the reports: the tool's banner, its summaries, its own notes.
bool is_summary(const std::string& body) {
  return starts_with(body, "COMPUTE-SANITIZER") || body.find("SUMMARY:") != std::string::npos ||
         starts_with(body, "Target application returned");
}

// The first "in FILE:LINE" and "at KERNEL+0x..." of the report's lines.
void locate(SanitizerFinding* f, const std::string& body) {
  static const std::regex in_file(R"(\bin ([^\s:]+):(\d+))");
  static const std::regex at_kernel(R"(\bat (.+?)\+0x[0-9a-fA-F]+)");
  std::smatch m;
  if (f->file.empty() && std::regex_search(body, m, in_file)) {
    f->file = m[1];
    f->line = std::atoi(m[2].str().c_str());
  }
  if (f->kernel.empty() && std::regex_search(body, m, at_kernel)) f->kernel = m[1];
}

}  // namespace

void parse_sanitizer_log(const std::string& log, int rank, std::vector<SanitizerFinding>* out,
                         int* errors) {
  std::istringstream in(log);
  SanitizerFinding cur;
  bool open = false, in_backtrace = false;
  int reports = 0, summary = -1;
  auto close = [&] {
    if (open) out->push_back(cur);
    open = false;
  };
  for (std::string line; std::getline(in, line);) {
    std::string body;
    if (!strip_prefix(line, &body)) continue;
    if (body.empty()) {
      close();
      continue;
    }
    if (is_summary(body)) {
      close();
      static const std::regex count(R"(SUMMARY:\s*(\d+))");
      std::smatch m;
      if (std::regex_search(body, m, count)) summary = std::max(summary, 0) + std::stoi(m[1]);
      continue;
    }
    if (body[0] != ' ') {  // a new report
      close();
      cur = SanitizerFinding{};
      cur.rank = rank;
      cur.what = starts_with(body, "Error: ") ? body.substr(7) : body;
      cur.text = body + "\n";
      locate(&cur, body);
      open = true;
      in_backtrace = false;
      ++reports;
      continue;
    }
    if (!open) continue;
    if (body.find("Host Frame") != std::string::npos ||
        body.find("host backtrace") != std::string::npos) {
      in_backtrace = true;  // the host's call stack: where it was launched, not where it broke
      continue;
    }
    if (in_backtrace) continue;
    cur.text += body + "\n";
    locate(&cur, body);
  }
  close();
  *errors = summary >= 0 ? summary : reports;
}

const SanitizerFinding* first_with_line(const std::vector<SanitizerFinding>& v) {
  for (const SanitizerFinding& f : v)
    if (!f.file.empty()) return &f;
  return v.empty() ? nullptr : &v.front();
}

}  // namespace eval
