// cli/live_menu_test.cpp: the menu's ways back and around (a diff against the best so far,
// back to an earlier turn's kernel, the help), accept with no kernel, the rule of a retry,
// long text wrapped where words end, with in-memory files for the terminal (80 columns),
// and a Ctrl-C at the menu on a real pseudo terminal.
#include <doctest/doctest.h>
#include <pty.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <string>
#include <thread>

#include "cli/live.h"
#include "cli/term_text.h"
#include "sandbox/interrupt.h"
#include "tests/has.h"

namespace {

struct MenuTerm {
  FILE* in = tmpfile();
  FILE* out = tmpfile();
  explicit MenuTerm(const std::string& typed) {
    fputs(typed.c_str(), in);
    rewind(in);
  }
  ~MenuTerm() {
    fclose(in);
    fclose(out);
  }
  std::string text() {
    fflush(out);
    rewind(out);
    std::string s;
    for (int c; (c = fgetc(out)) != EOF;) s += static_cast<char>(c);
    return s;
  }
};

// Every line of the text (escape codes and \r aside) fits in `cols` columns.
bool fits(const std::string& s, size_t cols) {
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    std::string line = s.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    std::string plain;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\033') {
        while (i < line.size() && !isalpha(static_cast<unsigned char>(line[i]))) ++i;
        continue;
      }
      if (line[i] == '\r')
        plain.clear();  // the status line redrawn in place
      else
        plain += line[i];
    }
    if (cli::display_width(plain) > cols) return false;
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return true;
}

agent::TurnEvent event(int turn, const std::string& phase, const std::string& detail) {
  agent::TurnEvent ev;
  ev.turn = turn;
  REQUIRE(sandbox::parse_enum(phase, &ev.phase));
  ev.detail = detail;
  return ev;
}

}  // namespace

TEST_CASE("live menu: parse_menu reads b, g N, back N and ?") {
  CHECK(cli::parse_menu("b").kind == cli::MenuChoice::best_diff);
  CHECK(cli::parse_menu("best").kind == cli::MenuChoice::best_diff);
  CHECK(cli::parse_menu("?").kind == cli::MenuChoice::help);
  cli::MenuChoice g = cli::parse_menu("g 3");
  CHECK(g.kind == cli::MenuChoice::rewind);
  CHECK(g.turn == 3);
  CHECK(cli::parse_menu("back 12").turn == 12);
  CHECK(cli::parse_menu("g").kind == cli::MenuChoice::unknown);
  CHECK(cli::parse_menu("g two").kind == cli::MenuChoice::unknown);
  CHECK(cli::parse_menu("g 0").kind == cli::MenuChoice::unknown);
  CHECK(cli::parse_menu("b 2").kind == cli::MenuChoice::unknown);
}

TEST_CASE("live menu: b diffs against the best so far; g N goes back to a turn that has a kernel") {
  MenuTerm t("b\n?\ng 5\ng 1\n");
  cli::LiveView view(t.in, t.out, false);
  agent::TurnEvent ev = event(1, "verdict", "");
  sandbox::Verdict v;
  v.status = sandbox::Status::correct;
  v.summary = "correct";
  ev.verdict = &v;
  ev.output = "int a;\n";
  view.on_event(ev);
  agent::Decision d = view.between_turns("int a2;\n", "int a;\n", "int a;\n", v);
  CHECK(d.action == agent::Action::rewind);
  CHECK(d.turn == 1);
  std::string s = t.text();
  CHECK(has(s, cli::kMenu3));
  CHECK(has(s, "--- best\n+++ current\n"));
  CHECK(has(s, "-int a;\n+int a2;\n"));
  CHECK(has(s, "g N       back to turn N"));  // the help
  CHECK(has(s, "h TEXT    a hint for the next prompt; the turn starts now"));
  CHECK(has(s, "no kernel of turn 5 to go back to (turns with one: 1)"));
  CHECK(fits(cli::kMenuHelp, 60));
  CHECK(cli::display_width(cli::kMenu3) <= 60);
  // No correct kernel yet: b says so.
  MenuTerm none("b\nq\n");
  cli::LiveView fresh(none.in, none.out, false);
  CHECK(fresh.between_turns("k\n", "", "", v).action == agent::Action::quit);
  CHECK(has(none.text(), "(no correct kernel yet to compare with)"));
}

TEST_CASE("live menu: accept with no kernel evaluated says so and stays in the menu") {
  MenuTerm t("a\nq\n");
  cli::LiveView view(t.in, t.out, false);
  // Ctrl-C stopped turn 1's model call: no kernel exists.
  CHECK(view.interrupted(1, agent::TurnPart::model_call, "", "").action == agent::Action::quit);
  std::string s = t.text();
  CHECK(has(s, "nothing to accept: no kernel was evaluated yet"));
  CHECK_FALSE(has(s, "accepted"));
  // With a kernel evaluated before, accept keeps it.
  MenuTerm k("a\n");
  cli::LiveView view2(k.in, k.out, false);
  CHECK(view2.interrupted(2, agent::TurnPart::model_call, "", "int a;\n").action ==
        agent::Action::accept);
  MenuTerm m("a\nq\n");
  cli::LiveView view3(m.in, m.out, false);
  CHECK(view3.menu_between_steps(2, "", "").action == agent::Action::quit);
  CHECK(has(m.text(), "nothing to accept"));
}

TEST_CASE("live menu: a retry's turn is drawn as a retry") {
  MenuTerm t("r\n");
  cli::LiveView view(t.in, t.out, false);
  view.on_event(event(1, "waiting_model", "openai:m"));
  sandbox::Verdict v;
  CHECK(view.between_turns("k\n", "", "", v).action == agent::Action::retry);
  view.on_event(event(2, "waiting_model", "openai:m"));
  view.on_event(event(3, "waiting_model", "openai:m"));
  std::string s = t.text();
  CHECK(has(s, "── turn 2 · retry of turn 1 ─"));
  CHECK(has(s, "── turn 3 ─"));
  CHECK_FALSE(has(s, "turn 3 · retry"));
}

TEST_CASE("live menu: long retry advice, replies and commands wrap at word ends, never cut") {
  MenuTerm t("v\n\n");
  cli::LiveView view(t.in, t.out, false);
  view.set_model("openai:m");
  std::string advice =
      "retrying (attempt 2): timeout: no byte from the server for 5 s (--idle-timeout 5): the "
      "server stalled (raise --idle-timeout if the model is slow to start)";
  view.on_event(event(1, "waiting_model", advice));
  std::string reply;
  for (int i = 0; i < 40; ++i) reply += "checked 4099 elements at -0.608 ";
  view.on_event(event(1, "reply", reply));
  view.on_event(event(1, "command", "echo " + reply));
  sandbox::Verdict v;
  // `v` shows the reply, then `s` the kernel: one long line of it.
  std::string kernel = "int main() {\n  float x[] = {" + reply + "};\n}\n";
  MenuTerm t2("s\n\n");
  cli::LiveView view2(t2.in, t2.out, true);  // in colour: the codes take no width
  CHECK(view2.between_turns(kernel, "", "", v).action == agent::Action::next);
  CHECK(fits(t2.text(), 80));
  CHECK_FALSE(has(t2.text(), "409\n"));
  CHECK(view.between_turns("k\n", "", "", v).action == agent::Action::next);
  std::string s = t.text();
  CHECK(has(s, "slow to start)"));  // the advice whole: wrapped, not cut with "…"
  CHECK(fits(s, 80));
  // No number split by a line end.
  CHECK_FALSE(has(s, "409\n"));
  CHECK_FALSE(has(s, "-0.\n"));
  CHECK_FALSE(has(s, "-0.6\n"));
}

TEST_CASE("term_text: wrap_path breaks after a '/', under its column") {
  std::string path = "/tmp/kforge-runs/runs/all_reduce/20261206-062000-openai-test-model-abc123";
  auto lines = cli::wrap_path(path, 40, "        ");
  REQUIRE(lines.size() >= 2);
  std::string joined;
  for (size_t i = 0; i < lines.size(); ++i) {
    CHECK(cli::display_width(lines[i]) <= 40);
    if (i > 0) CHECK(lines[i].rfind("        ", 0) == 0);
    joined += i == 0 ? lines[i] : lines[i].substr(8);
  }
  CHECK(joined == path);
  CHECK(lines[0].back() == '/');
  CHECK(cli::wrap_path("short", 40) == std::vector<std::string>{"short"});
}

// A Ctrl-C that arrives before the menu reads (while it draws), or while it waits, must
// end the wait: a read() that began after the handler ran would never see the signal.
TEST_CASE("live menu: an interrupt before or during the wait on a terminal quits the menu") {
  sandbox::Verdict v;
  for (bool before : {true, false}) {
    int master = -1, slave = -1;
    REQUIRE(openpty(&master, &slave, nullptr, nullptr, nullptr) == 0);
    FILE* in = fdopen(slave, "r");
    FILE* out = tmpfile();
    cli::LiveView view(in, out, false);
    sandbox::clear_interrupt();
    if (before) sandbox::request_interrupt(SIGINT);
    auto menu =
        std::async(std::launch::async, [&] { return view.between_turns("k\n", "", "", v); });
    if (!before) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      sandbox::request_interrupt(SIGINT);
    }
    bool ended = menu.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    if (!ended) CHECK(write(master, "q\n", 2) == 2);  // unblock it, and fail
    CHECK_MESSAGE(ended, (before ? "signal before the read" : "signal during the wait"));
    CHECK(menu.get().action == agent::Action::quit);
    sandbox::clear_interrupt();
    fclose(in);
    fclose(out);
    close(master);
  }
}
