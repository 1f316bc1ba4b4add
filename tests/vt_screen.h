// tests/vt_screen.h: what a terminal of a given width would show after the bytes a
// program wrote to it: the interactive tests replay kforge's output through this to see
// the screen (and the scrollback) a person is left with, stale fragments included. It
// knows what kforge writes: printable UTF-8 (wrapped at the width, with the deferred
// wrap of xterm and tmux), CR, LF, backspace, CSI n A (cursor up), CSI 2 K and CSI K
// (erase line), and ignores every other CSI sequence (colours).
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "cli/term_text.h"

namespace kf_pty {

class VtScreen {
 public:
  explicit VtScreen(size_t cols) : cols_(cols) {}

  void feed(const std::string& s) {
    for (size_t i = 0; i < s.size();) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      if (c == 0x1b && i + 1 < s.size() && s[i + 1] == '[') {
        size_t j = i + 2;
        while (j < s.size() && (s[j] < 0x40 || s[j] > 0x7e)) ++j;
        csi(s.substr(i + 2, j - i - 2), j < s.size() ? s[j] : ' ');
        i = j + 1;
        continue;
      }
      if (c == '\r') {
        col_ = 0;
      } else if (c == '\n') {
        ++row_;
        col_ = 0;  // the tty's ONLCR makes every LF a CRLF
      } else if (c == '\b') {
        if (col_ > 0) --col_;
      } else if (c >= 0x20) {
        size_t n = 1;
        while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
        put(s.substr(i, n));
        i += n;
        continue;
      }
      ++i;
    }
  }

  // Every row, scrollback first, trailing spaces dropped.
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& r : rows_) {
      std::string l;
      for (const auto& cell : r)
        if (cell != kWide) l += cell.empty() ? " " : cell;
      while (!l.empty() && l.back() == ' ') l.pop_back();
      out.push_back(l);
    }
    return out;
  }

 private:
  void row_exists() {
    while (rows_.size() <= row_) rows_.emplace_back();
    if (rows_[row_].size() < cols_) rows_[row_].resize(cols_);
  }

  void put(const std::string& ch) {
    size_t w = cli::display_width(ch);
    if (col_ + w > cols_) {  // the deferred wrap: only a character past the edge wraps
      ++row_;
      col_ = 0;
    }
    row_exists();
    rows_[row_][col_] = ch;
    for (size_t k = 1; k < w && col_ + k < cols_; ++k) rows_[row_][col_ + k] = kWide;
    col_ += w;
  }

  void csi(const std::string& params, char final) {
    int n = params.empty() || params[0] == '?' ? 1 : std::atoi(params.c_str());
    if (final == 'A') {
      row_ = row_ >= static_cast<size_t>(n) ? row_ - static_cast<size_t>(n) : 0;
    } else if (final == 'K') {
      row_exists();
      size_t from = params == "2" ? 0 : col_;
      for (size_t k = from; k < cols_; ++k) rows_[row_][k] = " ";
    }
  }

  static constexpr const char* kWide = "\x01";  // the second column of a wide character
  size_t cols_;
  std::vector<std::vector<std::string>> rows_;
  size_t row_ = 0, col_ = 0;
};

}  // namespace kf_pty
