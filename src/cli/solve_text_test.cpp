// cli/solve_text_test.cpp: what a person reads at the end of a run and in `kforge show`:
// the next step goes on with the run (--resume keeps its flags), a resumed run's parts,
// a budget event in plain words, and advice that names the flag the person used.
#include "cli/solve_text.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>

#include "cli/cmd_show.h"
#include "cli/solve_model.h"
#include "cli/solve_resume.h"
#include "tests/has.h"

namespace {

std::string joined_text(const std::vector<std::string>& lines) {
  std::string s;
  for (auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace

TEST_CASE("solve text: the next step goes on with the run through --resume") {
  agent::SolveConfig cfg;
  cfg.eval.problem.name = "all_reduce";
  cfg.max_turns = 3;
  agent::SolveResult r;
  r.exit_reason = agent::ExitReason::max_turns;
  r.turns = 3;
  cli::KeptKernels k{"", "", "/x/runs/all_reduce/20261206-a.jsonl"};
  std::string s = joined_text(cli::solve_end_lines(cfg, r, k));
  CHECK(has(s,
            "next: `kforge solve --resume /x/runs/all_reduce/20261206-a --max-turns 3` goes "
            "on for 3 more turns"));
  r.exit_reason = agent::ExitReason::quit;
  s = joined_text(cli::solve_end_lines(cfg, r, k));
  CHECK(has(s, "`kforge solve --resume /x/runs/all_reduce/20261206-a` goes on with this run"));
  CHECK_FALSE(has(s, "`kforge solve all_reduce`"));  // a new run would lose the flags
  r.exit_reason = agent::ExitReason::max_cost;
  r.budget = {"max_cost", 0.02, 0.02, ""};
  s = joined_text(cli::solve_end_lines(cfg, r, k));
  CHECK(has(s, "--resume /x/runs/all_reduce/20261206-a --max-cost N` goes on with a new budget"));
  // A resumed run: this part's spend, then the whole run's.
  r = {};
  r.exit_reason = agent::ExitReason::max_turns;
  r.part = 2;
  r.turns = 5, r.tokens_in = 300, r.tokens_out = 200, r.cost_usd = 0.5, r.seconds = 40;
  r.prior.turns = 2, r.prior.tokens_in = 100, r.prior.tokens_out = 100, r.prior.cost_usd = 0.2,
  r.prior.seconds = 10;
  s = joined_text(cli::solve_end_lines(cfg, r, k));
  CHECK(has(s,
            "this part (the run's part 2): 3 turns, 300 tokens, $0.3000, 30 s; the whole run: "
            "5 turns, 500 tokens, $0.5000, 40 s"));
  CHECK(cli::run_dir_of("/a/b.jsonl") == "/a/b");
}

TEST_CASE("kforge show: a budget event and a resumed part in plain words") {
  trace::Run run;
  run.raw.header = {{"type", "header"},
                    {"problem", "p"},
                    {"config", {{"eval", {{"world", 2}}}}},
                    {"topology", {{"source", "none"}}}};
  run.raw.events = {{{"type", "budget"},
                     {"budget", "max_cost"},
                     {"spent", 0.0152},
                     {"limit", 0.015},
                     {"note", ""},
                     {"phase", "before the model call"}},
                    {{"type", "budget"},
                     {"budget", "max_wall"},
                     {"spent", 5.2},
                     {"limit", 5},
                     {"note", "the eval was stopped"},
                     {"phase", "eval"}},
                    {{"type", "resumed"}, {"part", 2}, {"from_turn", 3}, {"after", "max_cost"}}};
  std::string s = cli::render_trajectory(run, false, "");
  CHECK(has(s, "budget spent: max_cost: $0.0152 of --max-cost $0.015 (before the model call)\n"));
  CHECK(has(s,
            "budget spent: max_wall: 5.2 s of --max-wall 5 s; the eval was stopped (during "
            "the eval)\n"));
  CHECK_FALSE(has(s, "during the before"));
  CHECK(has(s, "== resumed: part 2, from turn 3 (the part before: max_cost) =="));
}

TEST_CASE("solve: the provider's advice names --idle-timeout where the person gave it") {
  std::string msg =
      "timeout: no byte for 5 s: the server stalled (raise timeouts.idle_s if the model is slow "
      "to start)";
  CHECK(cli::advice_with_flags(msg, {true}) ==
        "timeout: no byte for 5 s: the server stalled (raise --idle-timeout if the model is slow "
        "to start)");
  CHECK(cli::advice_with_flags(msg, {false}) == msg);
}

namespace {

// What `fn` writes to stdout, through a temporary file in its place.
template <class Fn>
std::string stdout_of(Fn fn) {
  std::fflush(stdout);
  FILE* tmp = std::tmpfile();
  const int saved = dup(1);
  dup2(fileno(tmp), 1);
  fn();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::rewind(tmp);
  std::string s;
  for (int c; (c = std::fgetc(tmp)) != EOF;) s += static_cast<char>(c);
  std::fclose(tmp);
  return s;
}

}  // namespace

TEST_CASE("solve text: --headless lines name each event with the words scripts read") {
  cli::LineObserver obs(true, "m");
  agent::TurnEvent ev;
  ev.turn = 2;
  std::string lines = stdout_of([&] {
    for (agent::TurnPhase p :
         {agent::TurnPhase::waiting_model, agent::TurnPhase::evaluating, agent::TurnPhase::verdict,
          agent::TurnPhase::command_rejected, agent::TurnPhase::done}) {
      ev.phase = p;
      obs.on_event(ev);
    }
  });
  CHECK(lines ==
        "{\"cost_usd\":0.0,\"detail\":\"\",\"elapsed_s\":0.0,\"event\":\"waiting_model\","
        "\"tokens\":0,\"turn\":2}\n"
        "{\"cost_usd\":0.0,\"detail\":\"\",\"elapsed_s\":0.0,\"event\":\"evaluating\","
        "\"tokens\":0,\"turn\":2}\n"
        "{\"cost_usd\":0.0,\"detail\":\"\",\"elapsed_s\":0.0,\"event\":\"verdict\","
        "\"tokens\":0,\"turn\":2}\n"
        "{\"cost_usd\":0.0,\"detail\":\"\",\"elapsed_s\":0.0,\"event\":\"command_rejected\","
        "\"tokens\":0,\"turn\":2}\n"
        "{\"cost_usd\":0.0,\"detail\":\"\",\"elapsed_s\":0.0,\"event\":\"done\",\"tokens\":0,"
        "\"turn\":2}\n");
  // A live view's business, not a log's: no line at all.
  ev.phase = agent::TurnPhase::streaming;
  CHECK(stdout_of([&] { obs.on_event(ev); }).empty());
}
