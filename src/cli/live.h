// cli/live.h: `kforge solve` on a terminal. A status line per turn that updates in place
// while the model is thought about and the kernel evaluated ("turn 2 · waiting on
// openai:gpt-5 · 1,234 tokens"), a verdict line per turn, and between turns a menu read
// from the terminal: continue, a hint for the next prompt, the current kernel, its diff
// to the last one, accept, retry or quit.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "agent/observer.h"

namespace cli {

// The menu's answer to one line the user typed.
struct MenuChoice {
  enum Kind { next, hint, ask_hint, show, diff, accept, retry, quit, unknown } kind = next;
  std::string text;  // hint: the text; unknown: what was typed
};

// "" → next; "h" / "hint" → ask_hint (the text comes on the next line); "h TEXT" →
// hint; "s" show, "d" diff, "a" accept, "r" retry, "q" quit (or the whole word).
MenuChoice parse_menu(const std::string& line);

// "1,234,567".
std::string group_digits(int64_t n);

// The kernel with right-aligned line numbers.
std::string number_lines(const std::string& text);

// The one-line status of an event (no escape codes); `model` names the model when the
// event does not ("waiting on <model>").
std::string status_text(const agent::TurnEvent& ev, const std::string& model);

inline constexpr const char* kMenu =
    "[Enter] continue  h hint  s show kernel  d diff to last  a accept  r retry  q quit";

class LiveView : public agent::Observer {
 public:
  LiveView(FILE* in, FILE* out, bool color);
  // For "waiting on ..." when the loop's waiting_model event carries no detail.
  void set_model(const std::string& model) { model_ = model; }

  void on_event(const agent::TurnEvent& ev) override;
  agent::Decision between_turns(const std::string& current, const std::string& previous,
                                const std::string& best, const sandbox::Verdict& last) override;
  // The first Ctrl-C: says which phase of which turn was stopped and shows the menu; a
  // second one (already pending when the loop asks) quits.
  bool can_resume_after_interrupt() override;
  agent::Decision interrupted(int turn, const std::string& phase, const std::string& current,
                              const std::string& previous) override;

 private:
  void replace_line(const std::string& text, const char* sgr = nullptr);  // in place
  void print_line(const std::string& text, const char* sgr = nullptr);    // ends the status line
  bool read_line(const char* prompt, std::string* line);                  // false at EOF
  agent::Decision menu(const std::string& current, const std::string& previous);

  FILE* in_;
  FILE* out_;
  bool color_;
  bool open_ = false;  // a status line is on screen, without its newline
  std::string model_;
};

// The color of a verdict status: green correct, yellow mismatch/unstable, red the rest.
const char* status_sgr(const std::string& status);

}  // namespace cli
