// src/sweep/progress.h: how a sweep shows its progress. On a terminal one live line,
// rewritten in place (done / running / left, pass so far, spend, ETA); otherwise (a log,
// a pipe, CI) one plain line each time a sample finishes, no escape codes. NO_COLOR
// (https://no-color.org) turns the colours off, not the live line.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "sweep/sweep.h"

namespace sweep {

// "45s", "3m20s", "1h02m".
std::string duration_text(double seconds);

// The ETA: the time per sample finished in this run so far, times what is left (and
// running); "-" until one has finished.
std::string eta_text(const Progress& p, std::chrono::steady_clock::time_point now);

// The line, without a newline; `color` wraps the pass and failure counts in ANSI colours.
std::string progress_line(const Progress& p, std::chrono::steady_clock::time_point now, bool color);

class ProgressPrinter {
 public:
  // live: rewrite one line in place (a terminal that is not TERM=dumb).
  ProgressPrinter(std::FILE* out, bool live, bool color) : out_(out), live_(live), color_(color) {}
  // For stderr as it is: live on a terminal, colour unless NO_COLOR is set.
  static ProgressPrinter for_stderr();
  void update(const Progress& p);
  void finish();  // ends the live line

 private:
  std::FILE* out_;
  bool live_, color_;
  int printed_ = -1;  // finished samples at the last plain line
  bool open_ = false;
};

}  // namespace sweep
