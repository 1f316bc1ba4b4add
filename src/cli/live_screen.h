// cli/live_screen.h: the bottom of the terminal that `kforge solve` keeps live: a few
// preview lines (the reply as it streams) and a status line with a spinner and the
// seconds the step has taken, redrawn ten times a second by a thread of its own so that
// a stalled server shows as a clock that runs while nothing else moves. Everything else
// is printed above it once and stays in the scrollback.
//
// Why hand-written escapes and not a terminal library: the region is erased and redrawn
// with three sequences (CR, erase line, cursor up) that every terminal kforge meets
// understands; ncurses would take over the whole screen (and the scrollback that is the
// session's record), and the libraries that draw widgets inline (FTXUI, notcurses) are
// not packaged in Debian 12. Every region line is cut to the terminal's width less one
// column before it is drawn, so none wraps and the erase always removes all of it.
//
// While a step runs, the terminal reads keys one at a time without echo (a key must not
// wait for Enter, or echo into the region); Ctrl-C still signals. menu_key() says
// whether `m` was pressed. pause() gives the terminal back for a menu.
#pragma once

#include <termios.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cli {

class LiveScreen {
 public:
  LiveScreen(FILE* in, FILE* out, bool color);
  ~LiveScreen();
  LiveScreen(const LiveScreen&) = delete;
  LiveScreen& operator=(const LiveScreen&) = delete;

  // Prints whole lines above the region (each `sgr`-coloured when colour is on; lines
  // may wrap, they are never redrawn).
  void print(const std::vector<std::string>& lines, const char* sgr = nullptr);
  // A step begins: the status line reads `status`, the clock restarts; keys are read
  // from here on.
  void start_step(const std::string& status);
  // The same step, new words (tokens so far, a stage of the eval); the clock runs on.
  void update_status(const std::string& status);
  // Streamed text arrived: the preview shows its last lines; the "silent" clock restarts.
  void set_preview(const std::vector<std::string>& lines);
  // The step ended: the region is erased.
  void end_step();
  // For a menu or a question: the region erased, the terminal back to lines with echo.
  void pause();
  // `m` was pressed since the last call (and is forgotten now).
  bool menu_key();
  bool menu_key_pending() const { return menu_key_; }
  bool active() const {
    std::lock_guard<std::mutex> lock(mu_);
    return active_;
  }
  size_t cols() const;
  size_t rows() const;
  bool color() const { return color_; }
  FILE* out() const { return out_; }

 private:
  void tick();
  void draw_locked();   // the region, from scratch
  void erase_locked();  // the region, gone; the cursor at the start of its first row
  void keys_mode(bool on);
  std::string status_line_locked() const;

  FILE* in_;
  FILE* out_;
  bool color_;
  bool tty_in_, tty_out_;
  termios saved_{};
  bool raw_ = false;
  mutable std::mutex mu_;
  std::vector<std::string> preview_;
  std::string status_;
  bool active_ = false;  // a step runs: the region is shown, keys are read
  size_t drawn_rows_ = 0;
  int frame_ = 0;
  std::chrono::steady_clock::time_point step_start_, last_text_;
  bool streamed_ = false;
  std::atomic<bool> menu_key_{false};
  std::atomic<bool> stop_{false};
  std::thread ticker_;
};

// "4s", "1m05s", "1h02m".
std::string short_duration(double seconds);

}  // namespace cli
