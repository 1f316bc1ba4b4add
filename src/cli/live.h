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
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/observer.h"
#include "cli/event_text.h"
#include "cli/term_text.h"

namespace cli {

class LiveScreen;

// The menu's answer to one line the user typed.
struct MenuChoice {
  enum Kind {
    next,
    hint,
    ask_hint,
    show,
    diff,
    best_diff,
    view,
    accept,
    retry,
    quit,
    rewind,
    help,
    unknown
  } kind = next;
  std::string text;  // hint: the text; unknown: what was typed
  int turn = 0;      // rewind: the turn to go back to
};

// "" → next; "h" / "hint" → ask_hint (the text comes on the next line); "h TEXT" →
// hint, sent with the next turn at once; "s" show, "d" diff against the previous kernel,
// "b" diff against the best so far, "v" view the reply, "g N" / "back N" the kernel of
// turn N as the base of the next turn, "a" accept, "r" retry, "q" quit, "?" help (or
// the whole word).
MenuChoice parse_menu(const std::string& line);

// The kernel with right-aligned line numbers.
std::string number_lines(const std::string& text);

// A reply as the live view prints it: at most `prose` lines of its text outside code
// fences (then "… N more lines"), and each code block as its opening fence, its first
// `code` lines and "… N more lines of LANG" (agent mode: the command is printed as it
// runs, so only the prose). Printable text (term_text.h), no escape codes.
std::vector<std::string> collapse_reply(const std::string& reply, bool agent_mode, size_t prose = 3,
                                        size_t code = 6);

// The menu, two lines that fit in 60 columns. Tests wait for kMenu.
inline constexpr const char* kMenu = "Enter: next turn · h: hint · s: kernel · d: diff";
inline constexpr const char* kMenu2 = "v: reply · a: accept · r: retry · q: quit";
inline constexpr const char* kMenu3 = "b: diff to best · g N: back to turn N · ?: help";
// The menu's help (`?`): every key, one a line, within 60 columns.
inline constexpr const char* kMenuHelp =
    "Enter     the next turn: the model gets this verdict\n"
    "h TEXT    a hint for the next prompt; the turn starts now\n"
    "h         asks for the hint on a line of its own\n"
    "s         this kernel, in colour (a pager when long)\n"
    "d         this kernel against the previous one (a diff)\n"
    "b         this kernel against the best one so far\n"
    "v         the model's whole last reply\n"
    "g N       back to turn N: the next prompt goes on from\n"
    "          turn N's kernel and feedback; later turns leave\n"
    "          the conversation (the trajectory keeps them)\n"
    "a         accept this kernel and end the run\n"
    "r         retry: ask the model again for this turn\n"
    "q         quit; `kforge solve --resume RUN` goes on later\n";
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
  agent::Decision interrupted(int turn, agent::TurnPart phase, const std::string& current,
                              const std::string& previous) override;
  agent::CommandDecision confirm_command(int turn, const std::string& command) override;
  bool wants_menu() override;
  agent::Decision menu_between_steps(int turn, const std::string& current,
                                     const std::string& previous) override;

 private:
  void print(const std::string& text, const char* sgr = nullptr, const std::string& indent = "  ");
  bool read_line(const char* prompt, std::string* line);  // false at EOF
  // can_accept: an evaluated kernel exists (else `a` says there is nothing to accept).
  agent::Decision menu(const std::string& current, const std::string& previous,
                       const char* next_words, bool can_accept);
  // One of the menu's looks (s, v, d, b, ?); false for a choice that is not a look.
  bool look(const MenuChoice& m, const std::string& current, const std::string& previous);
  void show_long(const std::string& text);  // through the pager when longer than the screen
  std::string wrapped(const std::string& text) const;  // to the screen's width, at word ends
  void turn_opens(int turn);
  void waiting(const agent::TurnEvent& ev);
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
  std::map<int, std::string> kernels_;              // each evaluated turn's kernel
  std::string best_;                                // the best kernel so far ("" none)
  int retry_of_ = 0;  // the turn `r` asked again: the next rule says so
};

// The color of a verdict status: green correct, yellow mismatch/unstable, red the rest.
const char* status_sgr(sandbox::Status status);

}  // namespace cli
