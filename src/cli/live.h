// cli/live.h: `kforge solve` on a terminal. A header says what runs where; each turn
// opens with a rule; while the model writes, the bottom of the screen (live_screen.h)
// shows the reply's last lines as they stream and a status line with a spinner, the
// seconds the step has taken, the tokens so far and the spend; the reply is then printed
// collapsed (its prose cut to a few lines, its code block to its first lines; `v` at the
// menu shows all of it), in agent mode each command and the tail of its output, then
// the verdict, wrapped to the terminal's width. Between turns, and between any two
// steps once `m` was pressed, a menu: next, a hint for the next prompt, the kernel in
// colour (through a pager when it is longer than the screen), its diff, the reply,
// accept, retry or quit. With --confirm (agent mode) each command waits for a yes, an
// edit or a no.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/observer.h"

namespace cli {

class LiveScreen;

// The menu's answer to one line the user typed.
struct MenuChoice {
  enum Kind { next, hint, ask_hint, show, diff, view, accept, retry, quit, unknown } kind = next;
  std::string text;  // hint: the text; unknown: what was typed
};

// "" → next; "h" / "hint" → ask_hint (the text comes on the next line); "h TEXT" →
// hint; "s" show, "d" diff, "v" view the reply, "a" accept, "r" retry, "q" quit (or the
// whole word).
MenuChoice parse_menu(const std::string& line);

// "1,234,567".
std::string group_digits(int64_t n);

// The kernel with right-aligned line numbers.
std::string number_lines(const std::string& text);

// The one-line status of an event (no escape codes) for a log without a terminal;
// `model` names the model when the event does not ("waiting on <model>").
std::string status_text(const agent::TurnEvent& ev, const std::string& model);

// What an exit reason means, in words ("target" → "a kernel met the target").
std::string exit_reason_text(const std::string& exit_reason);

// A reply as the live view prints it: at most `prose` lines of its text outside code
// fences (then "… N more lines"), and each code block as its opening fence, its first
// `code` lines and "… N more lines of LANG" (agent mode: the command is printed as it
// runs, so only the prose). Printable text (term_text.h), no escape codes.
std::vector<std::string> collapse_reply(const std::string& reply, bool agent_mode, size_t prose = 3,
                                        size_t code = 6);

// The menu, two lines that fit in 60 columns. Tests wait for kMenu.
inline constexpr const char* kMenu = "Enter: next turn · h: hint · s: kernel · d: diff";
inline constexpr const char* kMenu2 = "v: reply · a: accept · r: retry · q: quit";
// --confirm's question.
inline constexpr const char* kConfirm = "Enter/y: run it · e: edit · n: reject";

// The header's rows: a label and its value.
using HeaderRows = std::vector<std::pair<std::string, std::string>>;

class LiveView : public agent::Observer {
 public:
  // `confirm`: agent mode's commands wait for the person (--confirm).
  LiveView(FILE* in, FILE* out, bool color, bool confirm = false);
  ~LiveView() override;
  // For "waiting on ..." when the loop's waiting_model event carries no detail.
  void set_model(const std::string& model) { model_ = model; }
  void set_agent_mode(bool agent) { agent_ = agent; }
  // The header at the start of the run: the title, then the rows, values wrapped.
  void header(const std::string& title, const HeaderRows& rows);
  // The end of the run: lines printed after the region is gone.
  void print_end(const std::vector<std::string>& lines, bool good);

  void on_event(const agent::TurnEvent& ev) override;
  agent::Decision between_turns(const std::string& current, const std::string& previous,
                                const std::string& best, const sandbox::Verdict& last) override;
  // The first Ctrl-C: says which phase of which turn was stopped and shows the menu; a
  // second one (already pending when the loop asks) quits.
  bool can_resume_after_interrupt() override;
  agent::Decision interrupted(int turn, const std::string& phase, const std::string& current,
                              const std::string& previous) override;
  agent::CommandDecision confirm_command(int turn, const std::string& command) override;
  bool wants_menu() override;
  agent::Decision menu_between_steps(int turn, const std::string& current,
                                     const std::string& previous) override;

 private:
  void print(const std::string& text, const char* sgr = nullptr, const std::string& indent = "  ");
  bool read_line(const char* prompt, std::string* line);  // false at EOF
  agent::Decision menu(const std::string& current, const std::string& previous,
                       const char* next_words);
  void show_long(const std::string& text);  // through the pager when longer than the screen
  void turn_opens(int turn);
  void streamed(const agent::TurnEvent& ev);
  void observed(const agent::TurnEvent& ev);
  void print_command(const std::string& command, size_t max_lines);
  std::string spend_text(int64_t tokens, double cost) const;

  FILE* in_;
  FILE* out_;
  bool color_;
  bool confirm_;
  bool agent_ = false;
  std::unique_ptr<LiveScreen> screen_;
  std::string model_;
  int turn_ = 0;             // the turn whose rule was printed
  std::string stream_;       // the reply being streamed
  std::string command_out_;  // the running command's output so far (its last 64 KiB)
  std::string last_reply_;   // for `v`
  std::string confirmed_;    // the command --confirm just showed whole and the person ran
  int64_t run_tokens_ = 0;   // the run's tokens at the last verdict
  double cost_ = 0;          // the run's cost so far
  std::vector<std::pair<int, std::string>> hints_;  // the turn each hint goes with
};

// The color of a verdict status: green correct, yellow mismatch/unstable, red the rest.
const char* status_sgr(sandbox::Status status);

}  // namespace cli
