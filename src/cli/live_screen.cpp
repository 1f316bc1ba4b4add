// cli/live_screen.cpp: see live_screen.h.
#include "cli/live_screen.h"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include "cli/term_text.h"

namespace cli {

namespace {

const char* kFrames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
constexpr int kFrameCount = 10;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

std::string short_duration(double s) {
  auto n = static_cast<int64_t>(s);
  if (n < 60) return fmt::format("{}s", n);
  if (n < 3600) return fmt::format("{}m{:02}s", n / 60, n % 60);
  return fmt::format("{}h{:02}m", n / 3600, n % 3600 / 60);
}

LiveScreen::LiveScreen(FILE* in, FILE* out, bool color)
    : in_(in),
      out_(out),
      color_(color),
      tty_in_(isatty(fileno(in)) != 0),
      tty_out_(isatty(fileno(out)) != 0) {
  if (tty_in_ && tcgetattr(fileno(in_), &saved_) != 0) tty_in_ = false;
  // The clock runs only where someone watches it; a file gets each state once.
  if (tty_out_) ticker_ = std::thread([this] { tick(); });
}

LiveScreen::~LiveScreen() {
  stop_ = true;
  if (ticker_.joinable()) ticker_.join();
  std::lock_guard<std::mutex> lock(mu_);
  erase_locked();
  keys_mode(false);
  fflush(out_);
}

size_t LiveScreen::cols() const {
  return terminal_cols(fileno(out_));
}

size_t LiveScreen::rows() const {
  return terminal_rows(fileno(out_));
}

void LiveScreen::keys_mode(bool on) {
  if (!tty_in_ || on == raw_) return;
  if (on) {
    termios t = saved_;
    t.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    tcsetattr(fileno(in_), TCSANOW, &t);
  } else {
    tcsetattr(fileno(in_), TCSANOW, &saved_);
  }
  raw_ = on;
}

// Ten times a second: a key, if one was typed, then the region again (the spinner's next
// frame, the clock).
void LiveScreen::tick() {
  while (!stop_) {
    bool reading;
    {
      std::lock_guard<std::mutex> lock(mu_);
      reading = active_ && raw_;
    }
    pollfd p{reading ? fileno(in_) : -1, POLLIN, 0};
    int ready = poll(&p, 1, 100);
    std::lock_guard<std::mutex> lock(mu_);
    // Ask again under the lock: while this thread polled, a menu may have come and gone
    // and read what was typed; a blocking read here would hold the lock until the next key.
    pollfd again{fileno(in_), POLLIN, 0};
    if (ready > 0 && active_ && raw_ && (p.revents & POLLIN) && poll(&again, 1, 0) > 0 &&
        (again.revents & POLLIN)) {
      char c = 0;
      if (read(fileno(in_), &c, 1) == 1 && (c == 'm' || c == 'M')) menu_key_ = true;
    }
    if (active_) {
      frame_ = (frame_ + 1) % kFrameCount;
      draw_locked();
    }
  }
}

// The clock first, so that a narrow terminal cuts the words rather than the time.
std::string LiveScreen::status_line_locked() const {
  std::string s = short_duration(seconds_since(step_start_));
  double silent = seconds_since(last_text_);
  if (streamed_ && silent >= 3) s += " (silent " + short_duration(silent) + ")";
  s += " · " + status_;
  s += menu_key_ ? " · menu after this step" : " · m: menu";
  return s;
}

void LiveScreen::erase_locked() {
  if (drawn_rows_ == 0) return;
  std::string e = "\r\033[2K";
  for (size_t i = 1; i < drawn_rows_; ++i) e += "\033[1A\033[2K";
  fputs(e.c_str(), out_);
  drawn_rows_ = 0;
}

void LiveScreen::draw_locked() {
  size_t width = cols() > 1 ? cols() - 1 : 1;  // never the last column: no wrap, ever
  std::string buf;
  size_t n = 0;
  if (drawn_rows_ > 0) {  // erase in the same write, so the region never flickers away
    buf += "\r\033[2K";
    for (size_t i = 1; i < drawn_rows_; ++i) buf += "\033[1A\033[2K";
  }
  for (const std::string& l : preview_) {
    std::string t = fit_width("  │ " + l, width);
    buf += color_ ? "\033[2m" + t + "\033[0m\n" : t + "\n";
    ++n;
  }
  std::string spin = kFrames[frame_];
  std::string status = fit_width(status_line_locked(), width - 2);
  buf += (color_ ? "\033[36m" + spin + "\033[0m " : spin + " ") + status;
  drawn_rows_ = n + 1;
  fputs(buf.c_str(), out_);
  fflush(out_);
}

void LiveScreen::print(const std::vector<std::string>& lines, const char* sgr) {
  std::lock_guard<std::mutex> lock(mu_);
  erase_locked();
  bool c = color_ && sgr;
  for (const std::string& l : lines)
    fmt::print(out_, "{}{}{}\n", c && !l.empty() ? sgr : "", l, c && !l.empty() ? "\033[0m" : "");
  if (active_) draw_locked();
  fflush(out_);
}

void LiveScreen::start_step(const std::string& status) {
  std::lock_guard<std::mutex> lock(mu_);
  status_ = status;
  preview_.clear();
  streamed_ = false;
  step_start_ = last_text_ = std::chrono::steady_clock::now();
  active_ = true;
  keys_mode(true);
  draw_locked();
}

void LiveScreen::update_status(const std::string& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!active_) {
    status_ = status;
    return;
  }
  bool changed = status != status_;
  status_ = status;
  if (changed && !tty_out_) draw_locked();  // without the clock's thread, now
}

void LiveScreen::set_preview(const std::vector<std::string>& lines) {
  std::lock_guard<std::mutex> lock(mu_);
  preview_ = lines;
  streamed_ = true;
  last_text_ = std::chrono::steady_clock::now();
}

void LiveScreen::end_step() {
  std::lock_guard<std::mutex> lock(mu_);
  erase_locked();
  active_ = false;
  preview_.clear();
  fflush(out_);
}

void LiveScreen::pause() {
  std::lock_guard<std::mutex> lock(mu_);
  erase_locked();
  active_ = false;
  preview_.clear();
  keys_mode(false);
  fflush(out_);
}

bool LiveScreen::menu_key() {
  return menu_key_.exchange(false);
}

}  // namespace cli
