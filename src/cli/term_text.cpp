// cli/term_text.cpp: see term_text.h.
#include "cli/term_text.h"

#include <sys/ioctl.h>
#include <unilbrk.h>
#include <unistr.h>
#include <uniwidth.h>

#include "sandbox/text.h"

namespace cli {

namespace {

const char* kEnc = "UTF-8";

// The length of the UTF-8 character at s[i] (1 for a bad byte) and its code point.
size_t next_char(const std::string& s, size_t i, ucs4_t* uc) {
  int n = u8_mbtouc(uc, reinterpret_cast<const uint8_t*>(s.data()) + i, s.size() - i);
  return n > 0 ? static_cast<size_t>(n) : 1;
}

int char_width(ucs4_t uc) {
  int w = uc_width(uc, kEnc);
  return w < 0 ? 1 : w;
}

}  // namespace

std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t col = 0;  // bytes since the line began: enough for tab stops in code and logs
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n') {
      out += '\n', col = 0, ++i;
      continue;
    }
    if (c == '\t') {
      do out += ' ', ++col;
      while (col % 4 != 0);
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      if (c != '\r') out += '?', ++col;  // \r\n line ends read as \n
      ++i;
      continue;
    }
    ucs4_t uc;
    int n = u8_mbtouc(&uc, reinterpret_cast<const uint8_t*>(s.data()) + i, s.size() - i);
    if (n <= 0 || uc == 0xfffd || (uc >= 0x80 && uc < 0xa0)) {
      out += "\xEF\xBF\xBD";  // a bad byte, or a C1 control (8-bit CSI)
      i += n > 0 ? static_cast<size_t>(n) : 1;
    } else {
      out.append(s, i, static_cast<size_t>(n));
      i += static_cast<size_t>(n);
    }
    ++col;
  }
  return out;
}

size_t display_width(const std::string& s) {
  size_t w = 0;
  for (size_t i = 0; i < s.size();) {
    ucs4_t uc;
    i += next_char(s, i, &uc);
    w += static_cast<size_t>(char_width(uc));
  }
  return w;
}

std::string fit_width(const std::string& s, size_t cols) {
  if (display_width(s) <= cols) return s;
  if (cols == 0) return "";
  std::string out;
  size_t w = 0;
  for (size_t i = 0; i < s.size();) {
    ucs4_t uc;
    size_t n = next_char(s, i, &uc);
    size_t cw = static_cast<size_t>(char_width(uc));
    if (w + cw > cols - 1) break;  // one column is kept for the ellipsis
    out.append(s, i, n);
    w += cw;
    i += n;
  }
  return out + "\xE2\x80\xA6";
}

namespace {

// One paragraph (no newline) into lines of at most `width` columns.
void wrap_paragraph(const std::string& p, size_t width, std::vector<std::string>* lines) {
  if (p.empty()) {
    lines->push_back("");
    return;
  }
  std::vector<char> brk(p.size());
  u8_width_linebreaks(reinterpret_cast<const uint8_t*>(p.data()), p.size(), static_cast<int>(width),
                      0, 0, nullptr, kEnc, brk.data());
  std::string cur;
  for (size_t i = 0; i < p.size();) {
    if (brk[i] == UC_BREAK_POSSIBLE && !cur.empty()) {
      while (!cur.empty() && cur.back() == ' ') cur.pop_back();
      lines->push_back(cur);
      cur.clear();
    }
    ucs4_t uc;
    size_t n = next_char(p, i, &uc);
    if (!cur.empty() && display_width(cur) + static_cast<size_t>(char_width(uc)) > width) {
      lines->push_back(cur);  // a word longer than the line: cut it
      cur.clear();
    }
    if (!(cur.empty() && uc == ' ' && !lines->empty())) cur.append(p, i, n);
    i += n;
  }
  lines->push_back(cur);
}

}  // namespace

std::vector<std::string> wrap_text(const std::string& s, size_t cols, const std::string& indent) {
  size_t iw = display_width(indent);
  size_t width = cols > iw + 10 ? cols - iw : 10;
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t nl = s.find('\n', start);
    std::vector<std::string> lines;
    wrap_paragraph(s.substr(start, nl == std::string::npos ? std::string::npos : nl - start), width,
                   &lines);
    for (size_t i = 0; i < lines.size(); ++i) out.push_back(i == 0 ? lines[i] : indent + lines[i]);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

namespace {

// One line with escape codes, wrapped: the plain text is wrapped, and each of its lines
// is found again in the raw line to cut it there (codes before a cut stay with its line).
void wrap_styled_line(const std::string& raw, size_t cols, const std::string& indent,
                      std::string* out) {
  std::string plain;
  std::vector<size_t> at;  // at[k]: where plain byte k is in raw
  for (size_t i = 0; i < raw.size();) {
    if (raw[i] == '\033') {  // ESC [ params final: a CSI sequence, no width
      ++i;
      if (i < raw.size() && raw[i] == '[') ++i;
      while (i < raw.size() && !(raw[i] >= 0x40 && raw[i] <= 0x7e)) ++i;
      ++i;
      continue;
    }
    at.push_back(i);
    plain += raw[i++];
  }
  at.push_back(raw.size());
  if (display_width(plain) <= cols) {
    *out += raw + "\n";
    return;
  }
  size_t off = 0, raw_from = 0, iw = indent.size();
  std::vector<std::string> lines = wrap_text(plain, cols, indent);
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string part = n == 0 ? lines[n] : lines[n].substr(std::min(iw, lines[n].size()));
    size_t pos = plain.find(part, off);
    if (pos == std::string::npos) pos = off;
    size_t end = n + 1 == lines.size() ? plain.size() : pos + part.size();
    *out += (n == 0 ? "" : indent) + raw.substr(raw_from, at[end] - raw_from) + "\n";
    raw_from = at[end], off = end;
  }
}

}  // namespace

std::string wrap_styled(const std::string& text, size_t cols, const std::string& indent) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    wrap_styled_line(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start),
                     cols, indent, &out);
    if (nl == std::string::npos) {
      out.pop_back();  // the text had no final newline
      break;
    }
    start = nl + 1;
  }
  return out;
}

std::vector<std::string> wrap_path(const std::string& path, size_t cols,
                                   const std::string& indent) {
  size_t iw = display_width(indent);
  std::vector<std::string> out;
  std::string cur;
  auto room = [&] { return out.empty() ? cols : (cols > iw + 10 ? cols - iw : 10); };
  for (size_t i = 0; i < path.size();) {
    size_t slash = path.find('/', i);
    size_t end = slash == std::string::npos ? path.size() : slash + 1;
    std::string part = path.substr(i, end - i);
    if (!cur.empty() && display_width(cur + part) > room()) {
      out.push_back(out.empty() ? cur : indent + cur);
      cur.clear();
    }
    cur += part;
    while (display_width(cur) > room()) {  // one part longer than a line: cut it hard
      size_t n = 0, w = 0;
      for (ucs4_t uc; n < cur.size();) {
        size_t len = next_char(cur, n, &uc);
        if (w + static_cast<size_t>(char_width(uc)) > room()) break;
        w += static_cast<size_t>(char_width(uc)), n += len;
      }
      out.push_back(out.empty() ? cur.substr(0, n) : indent + cur.substr(0, n));
      cur.erase(0, n);
    }
    i = end;
  }
  if (!cur.empty() || out.empty()) out.push_back(out.empty() ? cur : indent + cur);
  return out;
}

size_t terminal_cols(int fd) {
  struct winsize ws {};
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) return 80;
  return ws.ws_col;
}

size_t terminal_rows(int fd) {
  struct winsize ws {};
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0) return 24;
  return ws.ws_row;
}

std::string one_line(const std::string& s, size_t width) {
  return fit_width(sandbox::trim(printable(s.substr(0, s.find('\n')))), width);
}

}  // namespace cli
