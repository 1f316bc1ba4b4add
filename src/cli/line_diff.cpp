// cli/line_diff.cpp: see line_diff.h. The common prefix and suffix are cut first, so the
// quadratic table covers only the region that changed (one kernel against the next).
#include "cli/line_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace cli {

namespace {

struct Edit {
  char op;     // ' ' same, '-' only in a, '+' only in b
  int ai, bi;  // line indexes (of a for ' ' and '-', of b for ' ' and '+')
};

// The edit script of a[lo_a, hi_a) against b[lo_b, hi_b): an LCS table, then a walk.
void lcs_edits(const std::vector<std::string>& a, const std::vector<std::string>& b, int lo_a,
               int hi_a, int lo_b, int hi_b, std::vector<Edit>* out) {
  int n = hi_a - lo_a, m = hi_b - lo_b;
  // Past this many cells, say "all of a removed, all of b added" rather than use the memory.
  if (int64_t{n} * m > 16'000'000) {
    for (int i = lo_a; i < hi_a; ++i) out->push_back({'-', i, -1});
    for (int j = lo_b; j < hi_b; ++j) out->push_back({'+', -1, j});
    return;
  }
  // len[i][j]: LCS length of a[lo_a+i ..] and b[lo_b+j ..].
  std::vector<int> len(size_t(n + 1) * (m + 1), 0);
  auto at = [&](int i, int j) -> int& { return len[size_t(i) * (m + 1) + j]; };
  for (int i = n - 1; i >= 0; --i)
    for (int j = m - 1; j >= 0; --j)
      at(i, j) =
          a[lo_a + i] == b[lo_b + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
  int i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[lo_a + i] == b[lo_b + j]) {
      out->push_back({' ', lo_a + i, lo_b + j});
      ++i, ++j;
    } else if (j < m && (i == n || at(i, j + 1) > at(i + 1, j))) {
      out->push_back({'+', -1, lo_b + j});
      ++j;
    } else {
      out->push_back({'-', lo_a + i, -1});
      ++i;
    }
  }
}

// "l,n" of a hunk's side; an empty side names the line before it (as diff -u does).
std::string range(int first, int count) {
  if (count == 1) return std::to_string(first + 1);
  return fmt::format("{},{}", count == 0 ? first : first + 1, count);
}

}  // namespace

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

std::string unified_diff(const std::string& a_text, const std::string& b_text,
                         const std::string& a_name, const std::string& b_name, int context,
                         bool color) {
  auto a = split_lines(a_text), b = split_lines(b_text);
  int na = static_cast<int>(a.size()), nb = static_cast<int>(b.size());
  int pre = 0;
  while (pre < na && pre < nb && a[pre] == b[pre]) ++pre;
  int suf = 0;
  while (suf < na - pre && suf < nb - pre && a[na - 1 - suf] == b[nb - 1 - suf]) ++suf;
  if (pre == na && pre == nb) return "";

  std::vector<Edit> edits;
  for (int i = 0; i < pre; ++i) edits.push_back({' ', i, i});
  lcs_edits(a, b, pre, na - suf, pre, nb - suf, &edits);
  for (int k = suf; k > 0; --k) edits.push_back({' ', na - k, nb - k});

  const char* red = color ? "\033[31m" : "";
  const char* green = color ? "\033[32m" : "";
  const char* cyan = color ? "\033[36m" : "";
  const char* reset = color ? "\033[0m" : "";
  std::string out = fmt::format("--- {}\n+++ {}\n", a_name, b_name);
  int ne = static_cast<int>(edits.size());
  int k = 0;
  while (k < ne) {
    while (k < ne && edits[k].op == ' ') ++k;
    if (k == ne) break;
    // A hunk: from `context` lines before this change to `context` after the last change
    // that is no more than 2*context unchanged lines from the one before it.
    int begin = std::max(0, k - context), end = k;
    for (int same = 0; end < ne && same <= 2 * context; ++end)
      same = edits[end].op == ' ' ? same + 1 : 0;
    // `end` overshot by the unchanged run that closed the hunk; keep `context` of it.
    int last_change = end - 1;
    while (last_change > k && edits[last_change].op == ' ') --last_change;
    end = std::min(ne, last_change + 1 + context);

    int a_first = -1, b_first = -1, a_count = 0, b_count = 0;
    std::string body;
    for (int e = begin; e < end; ++e) {
      const Edit& d = edits[e];
      if (d.op != '+') {
        if (a_first < 0) a_first = d.ai;
        ++a_count;
      }
      if (d.op != '-') {
        if (b_first < 0) b_first = d.bi;
        ++b_count;
      }
      const std::string& line = d.op == '+' ? b[d.bi] : a[d.ai];
      const char* c = d.op == '-' ? red : d.op == '+' ? green : "";
      body += fmt::format("{}{}{}{}\n", c, d.op, line, *c ? reset : "");
    }
    // An empty side starts at the line before the hunk on that side.
    auto before = [&](bool side_a) {
      for (int e = begin - 1; e >= 0; --e) {
        int idx = side_a ? edits[e].ai : edits[e].bi;
        if (idx >= 0) return idx + 1;
      }
      return 0;
    };
    if (a_first < 0) a_first = before(true);
    if (b_first < 0) b_first = before(false);
    out += fmt::format("{}@@ -{} +{} @@{}\n", cyan, range(a_first, a_count),
                       range(b_first, b_count), reset);
    out += body;
    k = end;
  }
  return out;
}

}  // namespace cli
