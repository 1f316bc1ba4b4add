// cli/live_menu.cpp: the live view's questions (live.h): the menu between turns and
// between steps, what a Ctrl-C leads to, --confirm's question, and long text through a
// pager.
#include <fmt/format.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>

#include "cli/highlight.h"
#include "cli/line_diff.h"
#include "cli/live.h"
#include "cli/live_screen.h"
#include "cli/term_text.h"
#include "sandbox/interrupt.h"

namespace cli {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

bool LiveView::read_line(const char* prompt, std::string* line) {
  screen_->pause();
  fmt::print(out_, "{}", prompt);
  fflush(out_);
  line->clear();
  clearerr(in_);
  for (;;) {
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
  (void)best, (void)last;
  screen_->menu_key();  // this menu answers a pending `m` too
  return menu(current, previous, "next turn");
}

// A second Ctrl-C before the loop noticed the first: the person wants out.
bool LiveView::can_resume_after_interrupt() {
  return sandbox::interrupt_count() <= 1;
}

agent::Decision LiveView::interrupted(int turn, const std::string& phase,
                                      const std::string& current, const std::string& previous) {
  screen_->pause();
  print(fmt::format("interrupted: the {} of turn {} was stopped; Enter asks the model again, "
                    "Ctrl-C again quits",
                    phase, turn),
        "\033[33m");
  return menu(current, previous, "ask again");
}

bool LiveView::wants_menu() {
  return screen_->menu_key();
}

agent::Decision LiveView::menu_between_steps(int turn, const std::string& current,
                                             const std::string& previous) {
  screen_->pause();
  print(fmt::format("paused before turn {} (you pressed m)", turn), "\033[36m");
  return menu(current, previous, "go on");
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

// Read at the menu until a choice that ends it. A Ctrl-C there ends the read (EINTR) and
// the run with it: the loop sees the pending interrupt.
agent::Decision LiveView::menu(const std::string& current, const std::string& previous,
                               const char* next_words) {
  screen_->pause();
  for (;;) {
    std::string first = kMenu;
    if (std::string(next_words) != "next turn")
      first.replace(first.find("next turn"), 9, next_words);
    screen_->print({first, kMenu2}, "\033[2m");
    std::string line;
    if (!read_line("> ", &line)) {
      fmt::print(out_, "\n");
      return {agent::Action::quit, ""};
    }
    MenuChoice m = parse_menu(line);
    switch (m.kind) {
      case MenuChoice::next:
        return {agent::Action::next, ""};
      case MenuChoice::accept:
        return {agent::Action::accept, ""};
      case MenuChoice::retry:
        return {agent::Action::retry, ""};
      case MenuChoice::quit:
        return {agent::Action::quit, ""};
      case MenuChoice::hint:
        return {agent::Action::hint, m.text};
      case MenuChoice::ask_hint: {
        std::string text;
        if (!read_line("hint> ", &text)) return {agent::Action::quit, ""};
        text = trim(text);
        if (!text.empty()) return {agent::Action::hint, text};
        print("(no hint given)");
        break;
      }
      case MenuChoice::show:
        if (current.empty())
          print("(no kernel yet)");
        else
          show_long(highlighted_kernel(current, color_));
        break;
      case MenuChoice::view:
        if (last_reply_.empty())
          print("(no reply yet)");
        else
          show_long(printable(last_reply_) + "\n");
        break;
      case MenuChoice::diff: {
        if (previous.empty()) {
          print("(no previous kernel to compare with)");
          break;
        }
        std::string d =
            unified_diff(printable(previous), printable(current), "previous", "current", 3, color_);
        if (d.empty())
          print("(the same as the previous kernel)");
        else
          show_long(d);
        break;
      }
      case MenuChoice::unknown:
        print("unknown choice '" + m.text + "'", "\033[33m");
        break;
    }
  }
}

}  // namespace cli
