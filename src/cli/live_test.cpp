// cli/live_test.cpp: the live view's menu, status lines and between-turns dialogue, with
// in-memory files for the terminal.
#include "cli/live.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// The view reading `typed` and writing into a temporary file; read back with text().
struct Term {
  FILE* in = nullptr;
  FILE* out = tmpfile();
  explicit Term(const std::string& typed) {
    in = tmpfile();
    fputs(typed.c_str(), in);
    rewind(in);
  }
  ~Term() {
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

}  // namespace

TEST_CASE("live: parse_menu") {
  using K = cli::MenuChoice;
  CHECK(cli::parse_menu("").kind == K::next);
  CHECK(cli::parse_menu("  \n").kind == K::next);
  CHECK(cli::parse_menu("h").kind == K::ask_hint);
  CHECK(cli::parse_menu("hint").kind == K::ask_hint);
  auto h = cli::parse_menu("h  use the epoch barrier  \n");
  CHECK(h.kind == K::hint);
  CHECK(h.text == "use the epoch barrier");
  CHECK(cli::parse_menu("HINT more").text == "more");
  CHECK(cli::parse_menu("s").kind == K::show);
  CHECK(cli::parse_menu("diff").kind == K::diff);
  CHECK(cli::parse_menu("a").kind == K::accept);
  CHECK(cli::parse_menu("r").kind == K::retry);
  CHECK(cli::parse_menu("Q").kind == K::quit);
  CHECK(cli::parse_menu("x").kind == K::unknown);
  CHECK(cli::parse_menu("q now").kind == K::unknown);  // only a hint takes text
  CHECK(cli::parse_menu("hello").kind == K::unknown);
}

TEST_CASE("live: group_digits and number_lines") {
  CHECK(cli::group_digits(0) == "0");
  CHECK(cli::group_digits(999) == "999");
  CHECK(cli::group_digits(1234) == "1,234");
  CHECK(cli::group_digits(1234567) == "1,234,567");
  CHECK(cli::group_digits(-12345) == "-12,345");
  CHECK(cli::number_lines("a\nb\n") == "1  a\n2  b\n");
  std::string ten;
  for (int i = 0; i < 10; ++i) ten += "x\n";
  CHECK(cli::number_lines(ten).rfind(" 1  x\n", 0) == 0);
}

TEST_CASE("live: status_text per phase") {
  agent::TurnEvent ev;
  ev.turn = 2;
  ev.phase = agent::TurnPhase::waiting_model;
  CHECK(cli::status_text(ev, "openai:gpt-5") == "turn 2 · waiting on openai:gpt-5");
  ev.phase = agent::TurnPhase::streaming;
  ev.tokens = 1234;
  CHECK(cli::status_text(ev, "openai:gpt-5") == "turn 2 · waiting on openai:gpt-5 · 1,234 tokens");
  ev = {};
  ev.turn = 1;
  ev.phase = agent::TurnPhase::evaluating;
  ev.detail = "running 2 ranks";
  CHECK(cli::status_text(ev, "") == "turn 1 · running 2 ranks");
  ev.detail = "turn_1.cpp";
  CHECK(cli::status_text(ev, "") == "turn 1 · evaluating turn_1.cpp");
  ev.phase = agent::TurnPhase::waiting_model;
  ev.detail = "retrying (attempt 2): 503";
  CHECK(cli::status_text(ev, "openai:x") ==
        "turn 1 · waiting on openai:x · retrying (attempt 2): 503");
  ev.detail = "openai:x";
  CHECK(cli::status_text(ev, "") == "turn 1 · waiting on openai:x");
  ev.phase = agent::TurnPhase::evaluating;
  sandbox::Verdict v;
  v.status = sandbox::Status::mismatch;
  v.summary = "mismatch: rank 1, tensor y, 4 of 4 elements wrong";
  ev.phase = agent::TurnPhase::verdict;
  ev.verdict = &v;
  ev.detail = "";
  CHECK(cli::status_text(ev, "") == "turn 1 · mismatch: rank 1, tensor y, 4 of 4 elements wrong");
  ev.phase = agent::TurnPhase::command;
  ev.detail = "ls -la\nsecond line";
  CHECK(cli::status_text(ev, "") == "turn 1 · $ ls -la");
}

TEST_CASE("live: on_event: a rule per turn, the status line in place, the verdict colored") {
  Term t("");
  cli::LiveView view(t.in, t.out, true);
  agent::TurnEvent ev;
  ev.turn = 1;
  ev.phase = agent::TurnPhase::waiting_model;
  ev.detail = "openai:test-model";
  view.on_event(ev);
  ev.phase = agent::TurnPhase::streaming;
  ev.detail = "first line\nsecond";
  ev.tokens = 42;
  view.on_event(ev);
  sandbox::Verdict v;
  v.status = sandbox::Status::correct;
  v.summary = "correct: 1.10x NCCL";
  ev.phase = agent::TurnPhase::verdict;
  ev.detail = "";
  ev.verdict = &v;
  ev.tokens = 1234;
  view.on_event(ev);
  std::string s = t.text();
  CHECK(s.find("── turn 1 ─") != std::string::npos);
  CHECK(s.find("0s · turn 1 · waiting on openai:test-model · m: menu") != std::string::npos);
  CHECK(s.find("turn 1 · openai:test-model is writing · 42 tokens") != std::string::npos);
  CHECK(s.find("\033[32mturn 1: correct: 1.10x NCCL\033[0m\n") != std::string::npos);
  CHECK(s.find("spent so far: 1,234 tokens") != std::string::npos);
  // The region (status and preview) was erased before the verdict: nothing after the
  // verdict's line is left of it.
  CHECK(s.rfind("is writing") < s.find("turn 1: correct"));
}

TEST_CASE("live: a reply is collapsed to a few lines of prose and of its code block") {
  std::string reply = "one\ntwo\n\nthree\nfour\n```cpp\n";
  for (int i = 1; i <= 10; ++i) reply += "line " + std::to_string(i) + "\n";
  reply += "```\nafter\n";
  auto lines = cli::collapse_reply(reply, false, 3, 4);
  std::vector<std::string> want = {
      "one",    "two",    "three",  "… 1 more line",         "```cpp", "line 1",
      "line 2", "line 3", "line 4", "… 6 more lines of cpp", "```",    "after"};
  CHECK(lines == want);
  // Agent mode: the command is printed as it runs; the reply keeps its prose.
  auto agent = cli::collapse_reply("Look first.\n```bash\nls\n```\n", true);
  CHECK(agent == std::vector<std::string>{"Look first."});
  // A reply's escape sequences never reach the terminal.
  auto evil = cli::collapse_reply("hi \033[2J\033]0;title\007 there\n", false);
  REQUIRE(evil.size() == 1);
  CHECK(evil[0].find('\033') == std::string::npos);
}

TEST_CASE("live: the end of a run in words") {
  agent::TurnEvent ev;
  ev.phase = agent::TurnPhase::done;
  ev.detail = "max_turns";
  CHECK(cli::status_text(ev, "") == "the run ended: every turn --max-turns allows was used");
  ev.detail = "max_cost: $0.0150 of --max-cost $0.015";
  CHECK(cli::status_text(ev, "") ==
        "the run ended: the --max-cost budget was spent ($0.0150 of --max-cost $0.015)");
  CHECK(cli::exit_reason_text(agent::ExitReason::target) == "a kernel met the target");
}

TEST_CASE("live: --confirm runs, edits or rejects a command as typed") {
  struct Case {
    const char* typed;
    agent::CommandDecision::Kind want;
    const char* command;
    const char* reason;
  } cases[] = {{"\n", agent::CommandDecision::run, "ls", ""},
               {"y\n", agent::CommandDecision::run, "ls", ""},
               {"e\nls -la\n", agent::CommandDecision::edit, "ls -la", ""},
               {"e\n\n", agent::CommandDecision::run, "ls", ""},  // Enter keeps it
               {"n\nnot that folder\n", agent::CommandDecision::reject, "", "not that folder"},
               {"what\nn\n\n", agent::CommandDecision::reject, "", ""}};
  for (auto& c : cases) {
    Term t(c.typed);
    cli::LiveView view(t.in, t.out, false, true);
    CAPTURE(c.typed);
    auto d = view.confirm_command(3, "ls");
    CHECK(d.kind == c.want);
    if (c.want != agent::CommandDecision::reject) CHECK(d.command == c.command);
    CHECK(d.reason == c.reason);
    CHECK(t.text().find(cli::kConfirm) != std::string::npos);
  }
  Term t("");
  cli::LiveView unasked(t.in, t.out, false, false);  // without --confirm: runs, asks nothing
  CHECK(unasked.confirm_command(1, "ls").kind == agent::CommandDecision::run);
  CHECK(t.text().empty());
}

TEST_CASE("live: between_turns shows, diffs, then returns the typed hint") {
  Term t("s\nd\nbogus\nh\nuse the epoch barrier\n");
  cli::LiveView view(t.in, t.out, false);
  sandbox::Verdict v;
  auto d = view.between_turns("int a;\nint b2;\n", "int a;\nint b;\n", "", v);
  CHECK(d.action == agent::Action::hint);
  CHECK(d.hint == "use the epoch barrier");
  std::string s = t.text();
  CHECK(s.find(cli::kMenu) != std::string::npos);
  CHECK(s.find("1  int a;\n2  int b2;\n") != std::string::npos);
  CHECK(s.find(cli::kMenu2) != std::string::npos);
  CHECK(s.find("-int b;\n+int b2;\n") != std::string::npos);
  CHECK(s.find("unknown choice 'bogus'") != std::string::npos);
  CHECK(s.find("hint> ") != std::string::npos);
  CHECK(s.find("\033[") == std::string::npos);  // no color asked for
}

TEST_CASE("live: between_turns actions and EOF") {
  sandbox::Verdict v;
  struct Case {
    const char* typed;
    agent::Action want;
  } cases[] = {{"\n", agent::Action::next},   {"a\n", agent::Action::accept},
               {"r\n", agent::Action::retry}, {"q\n", agent::Action::quit},
               {"", agent::Action::quit},     {"h inline text\n", agent::Action::hint},
               {"h\n", agent::Action::quit}};  // EOF while asking for the hint text
  for (auto& c : cases) {
    Term t(c.typed);
    cli::LiveView view(t.in, t.out, false);
    CAPTURE(c.typed);
    CHECK(view.between_turns("k", "", "", v).action == c.want);
  }
  Term t("d\n\n");
  cli::LiveView view(t.in, t.out, false);
  CHECK(view.between_turns("k\n", "", "", v).action == agent::Action::next);
  CHECK(t.text().find("no previous kernel") != std::string::npos);
}
