// src/sweep/progress.cpp: see progress.h.
#include "sweep/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace sweep {

std::string duration_text(double s) {
  long long t = std::llround(std::max(0.0, s));
  if (t < 60) return fmt::format("{}s", t);
  if (t < 3600) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
}

std::string eta_text(const Progress& p, std::chrono::steady_clock::time_point now) {
  int finished_here = p.done - p.skipped + p.failed + p.not_runnable;
  int rest = p.left() + p.running;
  if (rest <= 0) return "0s";
  if (finished_here <= 0) return "-";
  double elapsed = std::chrono::duration<double>(now - p.started).count();
  return duration_text(elapsed / finished_here * rest);
}

std::string progress_line(const Progress& p, std::chrono::steady_clock::time_point now,
                          bool color) {
  auto paint = [&](const char* code, const std::string& s) {
    return color ? fmt::format("\033[{}m{}\033[0m", code, s) : s;
  };
  std::string line =
      fmt::format("sweep: {}/{} done, {} running, {} left | pass {} of {}", p.done, p.total,
                  p.running, std::max(0, p.left()), paint("32", std::to_string(p.correct)), p.done);
  if (p.failed) line += " | " + paint("31", fmt::format("{} failed", p.failed));
  if (p.not_runnable) line += fmt::format(" | {} not runnable here", p.not_runnable);
  line += fmt::format(" | ${:.3f} | ETA {}", p.cost_usd, eta_text(p, now));
  if (!p.last.empty()) line += " | last: " + p.last;
  return line;
}

ProgressPrinter ProgressPrinter::for_stderr() {
  const char* term = std::getenv("TERM");
  bool live = isatty(2) && !(term && std::strcmp(term, "dumb") == 0);
  const char* nc = std::getenv("NO_COLOR");
  bool color = live && !(nc && *nc);
  return ProgressPrinter(stderr, live, color);
}

void ProgressPrinter::update(const Progress& p) {
  auto now = std::chrono::steady_clock::now();
  if (live_) {
    fmt::print(out_, "\r\033[K{}", progress_line(p, now, color_));
    open_ = true;
  } else {
    // A line per finished sample (and one at the start), not per sample started.
    int finished = p.done + p.failed + p.not_runnable;
    if (finished == printed_) return;
    printed_ = finished;
    fmt::print(out_, "{}\n", progress_line(p, now, false));
  }
  std::fflush(out_);
}

void ProgressPrinter::finish() {
  if (open_) fmt::print(out_, "\n");
  open_ = false;
  std::fflush(out_);
}

}  // namespace sweep
