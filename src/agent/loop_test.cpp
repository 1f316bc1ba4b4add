// The loop in-process, on the host backend, with a scripted model and observer: what a
// retry, a hint, accept and quit do to the conversation, and the budgets.
#include "agent/loop.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

#include "agent/template.h"
#include "suite/paths.h"

namespace {

namespace fs = std::filesystem;

// Answers with replies[i] for the i-th call and keeps every request it was sent.
class ScriptModel : public agent::Model {
 public:
  explicit ScriptModel(std::vector<std::string> r) : replies_(std::move(r)) {}
  std::string name() const override { return "script"; }
  bool next(const llm::Request& req, const std::vector<sandbox::Verdict>&, llm::Reply* out,
            llm::Error* err) override {
    requests.push_back(req.messages);
    caps.push_back(req.max_tokens_cap);
    if (requests.size() > replies_.size()) {
      *err = {llm::ErrorKind::bad_request, "script spent", 0, false, ""};
      return false;
    }
    out->text = replies_[requests.size() - 1];
    size_t half = out->text.size() / 2;  // streamed in two pieces, as a server would
    if (req.on_delta) req.on_delta(out->text.substr(0, half)), req.on_delta(out->text.substr(half));
    out->usage.input_tokens = input_tokens;
    out->usage.output_tokens = 10;
    out->cost_usd = 0.5;
    return true;
  }
  std::vector<std::vector<llm::Message>> requests;
  std::vector<int64_t> caps;  // each request's max_tokens_cap
  int64_t input_tokens = 100;

 private:
  std::vector<std::string> replies_;
};

class ScriptObserver : public agent::Observer {
 public:
  explicit ScriptObserver(std::vector<agent::Decision> d) : decisions_(std::move(d)) {}
  agent::Decision between_turns(const std::string& cur, const std::string& prev, const std::string&,
                                const sandbox::Verdict& v) override {
    seen.push_back(sandbox::status_name(v.status));
    previous.push_back(prev);
    current.push_back(cur);
    return calls_ < decisions_.size() ? decisions_[calls_++] : agent::Decision{};
  }
  std::vector<std::string> seen, previous, current;

 private:
  std::vector<agent::Decision> decisions_;
  size_t calls_ = 0;
};

// A candidate that fails fast (no ranks start): a compile error, different each time.
std::string broken(int k) {
  return "```cpp\n#include <kf/kf.h>\nextern \"C\" int kf_run(kf::Comm&, kf::Tensors&) { return "
         "nope_" +
         std::to_string(k) + "; }\n```\n";
}

struct Fixture {
  Fixture() {
    dir = fs::temp_directory_path() / ("kf-loop-" + std::to_string(getpid()));
    std::string err;
    cfg.eval.paths = suite::default_paths();
    cfg.eval.paths.runs_dir = (dir / "runs").string();
    REQUIRE(
        suite::load_problem(cfg.eval.paths.problems_dir + "/all_reduce", &cfg.eval.problem, &err));
    cfg.eval.settings = sandbox::default_settings(sandbox::Backend::host);
    cfg.eval.settings.world = 2;
    cfg.eval.settings.sizes = {"small"};
    cfg.eval.settings.time = false;
    cfg.eval.machine = suite::default_h200();
    cfg.prompts_dir = agent::default_prompts_dir();
    cfg.workspace = (dir / "ws").string();
    cfg.topology = suite::host_topology();
    cfg.baseline_time = "not measured";
    fs::create_directories(dir);
    bool opened = tw.open_path((dir / "t.jsonl").string(), &err);
    REQUIRE_MESSAGE(opened, err);
  }
  ~Fixture() { fs::remove_all(dir); }
  fs::path dir;
  agent::SolveConfig cfg;
  trace::Writer tw;
};

}  // namespace

TEST_CASE(
    "loop: retry re-sends the same prompt, a hint is appended marked as the user's, quit stops") {
  Fixture f;
  ScriptModel m({broken(1), broken(2), broken(3), broken(4)});
  ScriptObserver o({{agent::Action::retry, ""},
                    {agent::Action::hint, "use a barrier"},
                    {agent::Action::quit, ""}});
  agent::SolveResult r;
  std::string err;
  REQUIRE_MESSAGE(agent::solve(f.cfg, m, o, f.tw, &r, &err), err);
  CHECK(r.exit_reason == agent::ExitReason::quit);
  CHECK_FALSE(r.target_met);
  REQUIRE(m.requests.size() == 3);
  CHECK(m.requests[1].size() == m.requests[0].size());  // retry: the same messages again
  CHECK(m.requests[1].back().content == m.requests[0].back().content);
  const std::string& third = m.requests[2].back().content;
  CHECK(third.find("Turn 2: your kernel does not compile") != std::string::npos);
  CHECK(third.find("A hint from the user") != std::string::npos);
  CHECK(third.find("use a barrier") != std::string::npos);
  CHECK(o.seen == std::vector<std::string>{"compile_error", "compile_error", "compile_error"});
  CHECK(o.previous[0].empty());
  CHECK(o.previous[1] == o.current[0]);
  CHECK(r.candidates == 3);
  CHECK_FALSE(r.has_best);
}

TEST_CASE("loop: budgets end the run: turns, tokens, cost") {
  std::string err;
  for (auto [which, want] : std::vector<std::pair<int, std::string>>{
           {0, "max_turns"}, {1, "max_tokens"}, {2, "max_cost"}}) {
    Fixture f;
    f.cfg.max_turns = which == 0 ? 2 : 10;
    if (which == 1) f.cfg.max_tokens = 100000;  // 50,010 a call (and the prompt): spent after 2
    if (which == 2) f.cfg.max_cost_usd = 1.0;   // 0.5 a call: spent after 2
    ScriptModel m({broken(1), broken(2), broken(3)});
    if (which == 1) m.input_tokens = 50000;
    agent::Observer o;
    agent::SolveResult r;
    REQUIRE_MESSAGE(agent::solve(f.cfg, m, o, f.tw, &r, &err), err);
    CHECK(agent::exit_reason_name(r.exit_reason) == std::string(want));
    REQUIRE(m.requests.size() == 2);
    CHECK(r.tokens_in == 2 * m.input_tokens);
    CHECK(r.budget.name == (which == 0 ? "" : want));
    if (which == 1) {  // each call's output is capped at what the budget leaves after its prompt
      CHECK(m.caps[0] == 100000 - agent::estimate_prompt_tokens(m.requests[0]));
      CHECK(m.caps[1] == 100000 - 50010 - agent::estimate_prompt_tokens(m.requests[1]));
    } else {
      CHECK(m.caps == std::vector<int64_t>{0, 0});  // no price: cost caps nothing
    }
  }
}

TEST_CASE("loop: accept stops with the best so far; the model's error ends the run as llm_error") {
  Fixture f;
  ScriptModel m({broken(1)});
  ScriptObserver o({{agent::Action::accept, ""}});
  agent::SolveResult r;
  std::string err;
  REQUIRE(agent::solve(f.cfg, m, o, f.tw, &r, &err));
  CHECK(r.exit_reason == agent::ExitReason::accepted);
  Fixture g;
  ScriptModel none({});
  agent::Observer o2;
  REQUIRE(agent::solve(g.cfg, none, o2, g.tw, &r, &err));
  CHECK(r.exit_reason == agent::ExitReason::llm_error);
  CHECK(r.llm_error.message == "script spent");
}

namespace {

// Agent mode's person: answers --confirm from a list, asks for the menu once before
// turn `menu_at` and gives a hint there; records every event.
class StepObserver : public agent::Observer {
 public:
  std::vector<agent::CommandDecision> answers;
  int menu_at = 0;
  std::vector<agent::TurnEvent> events;
  std::vector<int> menus;
  int turn = 0;

  void on_event(const agent::TurnEvent& e) override {
    turn = e.turn;
    events.push_back(e);
  }
  agent::CommandDecision confirm_command(int, const std::string& cmd) override {
    if (answers.empty()) return {agent::CommandDecision::run, cmd, ""};
    auto a = answers.front();
    answers.erase(answers.begin());
    return a;
  }
  bool wants_menu() override { return turn + 1 == menu_at; }
  agent::Decision menu_between_steps(int t, const std::string&, const std::string&) override {
    menus.push_back(t);
    return {agent::Action::hint, "look at the header"};
  }
  std::vector<agent::TurnEvent> of(const std::string& phase) const {
    std::vector<agent::TurnEvent> out;
    for (auto& e : events)
      if (sandbox::enum_name(e.phase) == phase) out.push_back(e);
    return out;
  }
};

std::string bash_reply(const std::string& cmd) {
  return "Next.\n```bash\n" + cmd + "\n```\n";
}

}  // namespace

TEST_CASE("loop: agent commands confirmed, rejected or edited; the menu between steps; events") {
  Fixture f;
  f.cfg.mode = agent::Mode::agent;
  f.cfg.max_turns = 4;
  f.cfg.command_timeout_s = 60;
  ScriptModel m({bash_reply("echo one"), bash_reply("echo two"), bash_reply("echo three"),
                 bash_reply("echo four")});
  StepObserver o;
  o.answers = {{agent::CommandDecision::run, "echo one", ""},
               {agent::CommandDecision::reject, "", "not now"},
               {agent::CommandDecision::edit, "echo edited", ""}};
  o.menu_at = 4;
  agent::SolveResult r;
  std::string err;
  REQUIRE_MESSAGE(agent::solve(f.cfg, m, o, f.tw, &r, &err), err);
  CHECK(r.exit_reason == agent::ExitReason::max_turns);
  REQUIRE(m.requests.size() == 4);
  const std::string& after_reject = m.requests[2].back().content;
  CHECK(after_reject.find("rejected your last command") != std::string::npos);
  CHECK(after_reject.find("not now") != std::string::npos);
  CHECK(after_reject.find("<returncode>") == std::string::npos);  // it never ran
  const std::string& after_edit = m.requests[3].back().content;
  CHECK(after_edit.find("```bash\necho edited\n```") != std::string::npos);
  CHECK(after_edit.find("<output>\nedited\n</output>") != std::string::npos);
  CHECK(after_edit.find("look at the header") != std::string::npos);  // the menu's hint
  CHECK(o.menus == std::vector<int>{4});

  // The events a live view draws from: the streamed pieces (the whole reply, in order),
  // the reply, each command and its output, the rejection and the hint's turn.
  std::string streamed;
  for (auto& e : o.of("streaming"))
    if (e.turn == 1) streamed += e.detail;
  CHECK(streamed == bash_reply("echo one"));
  REQUIRE(o.of("reply").size() == 4);
  CHECK(o.of("reply")[0].detail == bash_reply("echo one"));
  auto cmds = o.of("command");
  REQUIRE(cmds.size() == 3);  // one, edited, four: the rejected one never ran
  CHECK(cmds[1].detail == "echo edited");
  REQUIRE(o.of("observation").size() == 3);
  CHECK(o.of("observation")[0].output == "one\n");
  REQUIRE(o.of("command_rejected").size() == 1);
  CHECK(o.of("command_rejected")[0].detail == "not now");
  REQUIRE(o.of("hint").size() == 1);
  CHECK(o.of("hint")[0].turn == 4);
}
