// cli/live_menu.cpp: the live view's questions (live.h): the menu between turns and
// between steps, what a Ctrl-C leads to, --confirm's question, and long text through a
// pager.
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "cli/highlight.h"
#include "cli/line_diff.h"
#include "cli/live.h"
#include "cli/live_screen.h"
#include "cli/term_text.h"
#include "sandbox/interrupt.h"
#include "sandbox/text.h"

namespace cli {

using sandbox::trim;

namespace {

// One byte of a terminal's line, read from the descriptor rather than through stdio, so
// that a Ctrl-C that lands before the read begins is seen: a blocked read() would sleep
// through a signal whose handler already ran. Polls in 50 ms steps and checks the flag
// between them. 1: a byte in *c; 0: end of input; -1: interrupted.
int tty_byte(int fd, char* c) {
  for (;;) {
    if (sandbox::interrupted()) return -1;
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, 50);
    if (r < 0 && errno != EINTR) return 0;
    if (r <= 0) continue;
    ssize_t n = read(fd, c, 1);
    if (n == 1) return 1;
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) return 0;
  }
}

}  // namespace

// Text wrapped to the screen where Unicode allows a break, so that no word or number
// is split by the terminal's own wrap.
std::string LiveView::wrapped(const std::string& text) const {
  std::string out;
  for (const std::string& l : wrap_text(text, screen_->cols() > 1 ? screen_->cols() - 1 : 1))
    out += (out.empty() ? "" : "\n") + l;
  return out;
}

bool LiveView::read_line(const char* prompt, std::string* line) {
  screen_->pause();
  fmt::print(out_, "{}", prompt);
  fflush(out_);
  line->clear();
  clearerr(in_);
  int fd = fileno(in_);
  if (fd >= 0 && isatty(fd)) {  // in canonical mode: a whole line, or Ctrl-D, wakes poll
    for (char c;;) {
      int got = tty_byte(fd, &c);
      if (got <= 0) return got == 0 && !line->empty();
      if (c == '\n') return true;
      *line += c;
    }
  }
  for (;;) {
    if (sandbox::interrupted()) return false;
    int c = fgetc(in_);
    if (c == EOF) return !line->empty() && !sandbox::interrupted();
    if (c == '\n') return true;
    *line += static_cast<char>(c);
  }
}

// Longer than the screen: through $PAGER (else less -R, which keeps the colours and
// leaves the text in the scrollback with -X); else printed.
void LiveView::show_long(const std::string& text) {
  screen_->pause();
  size_t lines = split_lines(text).size();
  if (lines + 2 > screen_->rows() && isatty(fileno(out_))) {
    fflush(out_);
    const char* env = std::getenv("PAGER");
    std::string pager = env && *env ? env : "less -R -X";
    if (FILE* p = popen(pager.c_str(), "w")) {
      fputs(text.c_str(), p);
      int st = pclose(p);
      if (st != -1 && !(WIFEXITED(st) && WEXITSTATUS(st) == 127)) return;  // 127: no pager
    }
  }
  fputs(text.c_str(), out_);
  fflush(out_);
}

agent::Decision LiveView::between_turns(const std::string& current, const std::string& previous,
                                        const std::string& best, const sandbox::Verdict& last) {
  (void)last;
  best_ = best;
  screen_->menu_key();  // this menu answers a pending `m` too
  return menu(current, previous, "next turn", true);
}

// A second Ctrl-C before the loop noticed the first: the person wants out.
bool LiveView::can_resume_after_interrupt() {
  return sandbox::interrupt_count() <= 1;
}

agent::Decision LiveView::interrupted(int turn, agent::TurnPart phase, const std::string& current,
                                      const std::string& previous) {
  screen_->pause();
  print(fmt::format("interrupted: the {} of turn {} was stopped; Enter asks the model again, "
                    "Ctrl-C again quits",
                    sandbox::enum_name(phase), turn),
        "\033[33m");
  // `previous` is the last kernel evaluated: the one accept would keep.
  return menu(current, previous, "ask again", !previous.empty());
}

bool LiveView::wants_menu() {
  return screen_->menu_key();
}

agent::Decision LiveView::menu_between_steps(int turn, const std::string& current,
                                             const std::string& previous) {
  screen_->pause();
  print(fmt::format("paused before turn {} (you pressed m)", turn), "\033[36m");
  return menu(current, previous, "go on", !current.empty());
}

agent::CommandDecision LiveView::confirm_command(int turn, const std::string& command) {
  if (!confirm_) return {agent::CommandDecision::run, command, ""};
  screen_->pause();
  print(fmt::format("turn {} · the model wants to run:", turn), "\033[1m");
  print_command(command, SIZE_MAX);
  for (;;) {
    print(kConfirm, "\033[2m");
    std::string line;
    if (!read_line("run? ", &line)) return {agent::CommandDecision::reject, "", "(no answer)"};
    std::string a = trim(line);
    if (a.empty() || a == "y" || a == "yes") {
      confirmed_ = command;
      return {agent::CommandDecision::run, command, ""};
    }
    if (a == "e" || a == "edit") {
      std::string edited;
      if (!read_line("command (Enter keeps it)> ", &edited)) continue;
      edited = trim(edited);
      if (edited.empty()) {
        confirmed_ = command;
        return {agent::CommandDecision::run, command, ""};
      }
      print("running your command instead; the model is told", "\033[36m");
      return {agent::CommandDecision::edit, edited, ""};
    }
    if (a == "n" || a == "no") {
      std::string why;
      read_line("why (told to the model; Enter for no reason)> ", &why);
      return {agent::CommandDecision::reject, "", trim(why)};
    }
    print("unknown answer '" + a + "'", "\033[33m");
  }
}

bool LiveView::look(const MenuChoice& m, const std::string& current, const std::string& previous) {
  auto diff = [&](const std::string& a, const char* a_name, const char* none, const char* same) {
    if (a.empty()) return print(none);
    std::string d = unified_diff(printable(a), printable(current), a_name, "current", 3, color_);
    if (d.empty())
      print(same);
    else
      show_long(d);
  };
  switch (m.kind) {
    case MenuChoice::show:
      if (current.empty())
        print("(no kernel yet)");
      else
        show_long(wrap_styled(highlighted_kernel(current, color_),
                              screen_->cols() > 1 ? screen_->cols() - 1 : 1, "        "));
      return true;
    case MenuChoice::view:
      if (last_reply_.empty())
        print("(no reply yet)");
      else
        show_long(wrapped(printable(last_reply_)) + "\n");
      return true;
    case MenuChoice::diff:
      diff(previous, "previous", "(no previous kernel to compare with)",
           "(the same as the previous kernel)");
      return true;
    case MenuChoice::best_diff:
      diff(best_, "best", "(no correct kernel yet to compare with)",
           "(this kernel is the best so far)");
      return true;
    case MenuChoice::help:
      show_long(kMenuHelp);
      return true;
    default:
      return false;
  }
}

// Read at the menu until a choice that ends it. A Ctrl-C there ends the read (EINTR) and
// the run with it: the loop sees the pending interrupt.
agent::Decision LiveView::menu(const std::string& current, const std::string& previous,
                               const char* next_words, bool can_accept) {
  screen_->pause();
  for (;;) {
    std::string first = kMenu;
    if (std::string(next_words) != "next turn")
      first.replace(first.find("next turn"), 9, next_words);
    screen_->print({first, kMenu2, kMenu3}, "\033[2m");
    std::string line;
    if (!read_line("> ", &line)) {
      fmt::print(out_, "\n");
      return {agent::Action::quit, ""};
    }
    MenuChoice m = parse_menu(line);
    if (look(m, current, previous)) continue;
    switch (m.kind) {
      case MenuChoice::next:
        return {agent::Action::next, ""};
      case MenuChoice::accept:
        if (can_accept) return {agent::Action::accept, ""};
        print("nothing to accept: no kernel was evaluated yet (Enter asks the model, q quits)",
              "\033[33m");
        break;
      case MenuChoice::retry:
        retry_of_ = turn_;
        return {agent::Action::retry, ""};
      case MenuChoice::quit:
        return {agent::Action::quit, ""};
      case MenuChoice::hint:
        return {agent::Action::hint, m.text};
      case MenuChoice::rewind: {
        if (kernels_.count(m.turn)) return {agent::Action::rewind, "", m.turn};
        std::string have;
        for (auto& [t, k] : kernels_) have += (have.empty() ? "" : ", ") + std::to_string(t);
        print(fmt::format("no kernel of turn {} to go back to{}", m.turn,
                          have.empty() ? "" : " (turns with one: " + have + ")"),
              "\033[33m");
        break;
      }
      case MenuChoice::ask_hint: {
        std::string text;
        if (!read_line("hint> ", &text)) return {agent::Action::quit, ""};
        text = trim(text);
        if (!text.empty()) return {agent::Action::hint, text};
        print("(no hint given)");
        break;
      }
      default:
        print("unknown choice '" + m.text + "' (? lists the keys)", "\033[33m");
        break;
    }
  }
}

}  // namespace cli
