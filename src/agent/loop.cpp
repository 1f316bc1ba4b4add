// agent/loop.cpp
#include "agent/loop.h"

#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "agent/bash_env.h"
#include "agent/feedback.h"
#include "agent/loop_json.h"
#include "agent/prompt.h"
#include "agent/reply.h"
#include "agent/template.h"
#include "sandbox/deadline.h"
#include "sandbox/interrupt.h"
#include "sandbox/process.h"
#include "sandbox/sha256.h"

namespace agent {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// What one step of a turn came to. cut: a signal or the deadline stopped it.
enum class Step { ok, cut, end, fail };

class Run {
 public:
  Run(const SolveConfig& c, Model& m, Observer& o, trace::Writer& w, SolveResult* r)
      : cfg_(c), model_(m), obs_(o), tw_(w), res_(*r) {}

  bool go(std::string* err) {
    std::error_code ec;
    fs::create_directories(cfg_.workspace, ec);
    if (ec)
      return (*err = "cannot create the workspace " + cfg_.workspace + ": " + ec.message(), false);
    std::string sys, task;
    if (!first_messages(&sys, &task, err)) return false;
    msgs_ = {{"system", sys}, {"user", task}};
    if (cfg_.mode == "agent" && !init_env(err)) return false;
    // The run's --max-wall as kforge's deadline, for as long as the run lasts.
    sandbox::DeadlineScope deadline(
        cfg_.max_wall_s > 0 ? std::max(cfg_.max_wall_s - elapsed(), 0.001) : 0);
    for (int turn = 1;; ++turn) {
      Step s =
          turn > cfg_.max_turns ? (res_.exit_reason = "max_turns", Step::end) : one_turn(turn, err);
      if (s == Step::fail) return false;
      if (s == Step::end) break;
    }
    finish();
    return true;
  }

 private:
  double elapsed() const { return tw_.elapsed(); }

  bool first_messages(std::string* sys, std::string* task, std::string* err) {
    if (cfg_.foreign) {
      if (cfg_.mode != "direct")
        return (*err = cfg_.foreign->suite + ": only --mode direct runs a suite's problems", false);
      *sys = cfg_.foreign->system_prompt, *task = cfg_.foreign->task_prompt;
      return true;
    }
    PromptInputs pin{cfg_.eval,     cfg_.mode,          cfg_.target,
                     cfg_.topology, cfg_.baseline_time, cfg_.prompts_dir};
    return build_system_prompt(pin, sys, err) && build_task_prompt(pin, task, err);
  }

  ParsedReply parse(const std::string& text) const {
    if (cfg_.foreign) return cfg_.foreign->parse(text);
    return cfg_.mode == "agent" ? parse_agent_reply(text, cfg_.eval.backend)
                                : parse_direct_reply(text, cfg_.eval.backend);
  }

  std::string extension() const {
    return cfg_.foreign ? cfg_.foreign->extension : eval::kernel_extension(cfg_.eval.backend);
  }

  // One model call and what follows it. ok: on to the next turn; end: the run is over
  // (exit_reason set); fail: kforge failed (*err).
  Step one_turn(int turn, std::string* err) {
    if (turn > 1 && obs_.wants_menu()) {
      Step s = step_menu(turn, err);
      if (s != Step::ok) return s;
    }
    if (!budget_left(turn, "before the model call")) return Step::end;
    res_.turns = turn;
    size_t before = msgs_.size();
    llm::Reply reply;
    Step s = ask(turn, &reply);
    if (s == Step::cut) return after_cut(turn, "model call", before, "", err);
    if (s != Step::ok) return s;
    msgs_.push_back({"assistant", reply.text});
    ParsedReply pr = parse(reply.text);
    if (!pr.ok) {
      if (!format_error(turn, pr.error, err)) return Step::fail;
      return res_.exit_reason.empty() ? Step::ok : Step::end;
    }
    format_errors_ = 0;
    std::string source = pr.code;
    if (cfg_.mode == "agent") {
      bool submitted = false;
      s = command(turn, pr.code, &source, &submitted, err);
      if (s == Step::cut) return after_cut(turn, "agent command", before, "", err);
      if (s != Step::ok || !submitted) return s;
    }
    sandbox::Verdict v;
    s = evaluate(turn, source, &v, err);
    if (s == Step::cut)
      return after_cut(turn, stage_.rfind("compiling", 0) == 0 ? "compile" : "eval", before, source,
                       err);
    if (s != Step::ok) return s;
    if (target_met(v, cfg_.target)) {
      res_.exit_reason = "target";
      res_.target_met = true;
      return Step::end;
    }
    std::string feedback;
    if (!render_feedback(cfg_.prompts_dir, v, turn, cfg_.target, &feedback, err)) return Step::fail;
    if (!profile(turn, v, &feedback, err)) return Step::fail;
    if (sandbox::stop_requested()) return after_cut(turn, "eval", before, source, err);
    Decision d = obs_.between_turns(source, prev_source_, res_.best_source, v);
    prev_source_ = source;
    if (sandbox::interrupted()) return end_interrupted(turn, "menu");  // Ctrl-C at the menu
    tw_.event("decision", {{"turn", turn}, {"action", action_name(d.action)}});
    if (d.action == Action::retry)
      msgs_.resize(before);
    else
      msgs_.push_back({"user", feedback});
    return decide(turn + 1, d, err);
  }

  // The menu a person asked for between two steps (before turn's model call): a hint
  // goes into the prompt about to be sent; accept and quit end the run; next and retry
  // go on with it.
  Step step_menu(int turn, std::string* err) {
    Decision d = obs_.menu_between_steps(turn, res_.last_source, prev_source_);
    if (sandbox::interrupted()) return end_interrupted(turn, "menu");
    tw_.event("decision",
              {{"turn", turn}, {"action", action_name(d.action)}, {"after", "menu_key"}});
    return decide(turn, d, err);
  }

  // Accept and quit end the run; a hint goes into the prompt of turn `next_turn` (the
  // last message).
  Step decide(int next_turn, const Decision& d, std::string* err) {
    if (d.action == Action::accept) return (res_.exit_reason = "accepted", Step::end);
    if (d.action == Action::quit) return (res_.exit_reason = "quit", Step::end);
    if (d.action == Action::hint && !d.hint.empty()) {
      std::string h;
      if (!render_prompt_file(cfg_.prompts_dir, "hint.md", {{"hint", d.hint}}, &h, err))
        return Step::fail;
      msgs_.back().content += h;
      tw_.event("hint", {{"turn", next_turn}, {"text", d.hint}});
      emit(next_turn, "hint", d.hint);
    }
    return Step::ok;
  }

  // A signal or the deadline stopped `phase` of the turn: its children are dead and
  // nothing of it counts. The deadline ends the run; a signal asks the observer, which
  // may resume (the turn is asked again, its reply forgotten).
  Step after_cut(int turn, const std::string& phase, size_t before, const std::string& current,
                 std::string* err) {
    if (!sandbox::interrupted()) {
      end_budget(turn, phase,
                 {"max_wall", elapsed(), cfg_.max_wall_s, "the " + phase + " was stopped"});
      return Step::end;
    }
    int sig = sandbox::interrupt_signal();
    tw_.event(
        "interrupted",
        {{"turn", turn}, {"signal", sandbox::signal_name(sig)}, {"signo", sig}, {"phase", phase}});
    emit(turn, "interrupted", fmt::format("{} stopped the {}", sandbox::signal_name(sig), phase));
    if (!obs_.can_resume_after_interrupt()) return end_interrupted(turn, phase);
    sandbox::clear_interrupt();
    Decision d = obs_.interrupted(turn, phase, current, prev_source_);
    if (sandbox::interrupted()) return end_interrupted(turn, "menu");  // a Ctrl-C at its menu
    tw_.event("decision",
              {{"turn", turn}, {"action", action_name(d.action)}, {"after", "interrupted"}});
    msgs_.resize(before);
    return decide(turn + 1, d, err);
  }

  Step end_interrupted(int turn, const std::string& phase) {
    res_.exit_reason = "interrupted";
    res_.interrupt_signal = sandbox::interrupt_signal();
    res_.interrupt_phase = phase;
    if (phase == "menu")
      tw_.event("interrupted", {{"turn", turn},
                                {"signal", sandbox::signal_name(res_.interrupt_signal)},
                                {"signo", res_.interrupt_signal},
                                {"phase", phase}});
    return Step::end;
  }

  void end_budget(int turn, const std::string& phase, const BudgetEnd& b) {
    res_.exit_reason = b.name;
    res_.budget = b;
    tw_.event("budget", {{"turn", turn},
                         {"budget", b.name},
                         {"spent", b.spent},
                         {"limit", b.limit},
                         {"phase", phase},
                         {"note", b.note}});
    emit(turn, "budget", b.name + ": " + b.text());
  }

  // Before a model call: the budgets leave room for it, and req_cap_ is its output cap.
  bool budget_left(int turn, const std::string& phase) {
    Limits lim{cfg_.max_tokens, cfg_.max_cost_usd, cfg_.max_wall_s};
    Spent spent{res_.tokens_in + res_.tokens_out, res_.cost_usd, elapsed()};
    BudgetEnd b;
    if (next_call_cap(lim, spent, estimate_prompt_tokens(msgs_), model_.price(), &req_cap_, &b))
      return true;
    end_budget(turn, phase, b);
    return false;
  }

  void emit(int turn, const std::string& phase, const std::string& detail, int64_t tokens = 0,
            const sandbox::Verdict* v = nullptr, const std::string& output = "") {
    TurnEvent e;
    e.turn = turn;
    e.phase = phase;
    e.detail = detail;
    e.output = output;
    e.tokens = tokens;
    e.verdict = v;
    e.cost_usd = res_.cost_usd;
    e.elapsed_s = elapsed();
    obs_.on_event(e);
  }

  void log_prompt(int turn) {
    tw_.event("prompt", prompt_event(turn, logged_, msgs_));
    logged_ = msgs_;
  }

  Step ask(int turn, llm::Reply* reply) {
    log_prompt(turn);
    emit(turn, "waiting_model", model_.name());
    llm::Request req;
    req.messages = msgs_;
    req.max_tokens = cfg_.reply_max_tokens;
    req.max_tokens_cap = req_cap_;
    if (cfg_.llm_seed >= 0) req.seed = cfg_.llm_seed;
    // Streamed progress for the live view, every piece as it arrives (the view draws at
    // its own pace): the text, and the server's output-token count where it sends one,
    // else about four characters a token.
    int64_t chars = 0, tokens = -1;
    req.on_delta = [&, turn](const std::string& d) {
      chars += static_cast<int64_t>(d.size());
      emit(turn, "streaming", d, tokens >= 0 ? tokens : chars / 4);
    };
    req.on_tokens = [&, turn](int64_t t) {
      tokens = t;
      emit(turn, "streaming", "", t);
    };
    req.on_retry = [&, turn](int attempt, const llm::Error& why) {
      chars = 0;
      emit(turn, "waiting_model", fmt::format("retrying (attempt {}): {}", attempt, why.message));
    };
    llm::Error e;
    bool ok = model_.next(req, verdicts_, reply, &e);
    res_.tokens_in += reply->usage.input_tokens;
    res_.tokens_out += reply->usage.output_tokens;
    res_.tokens_cache_read += reply->usage.cache_read_tokens;
    res_.tokens_cache_write += reply->usage.cache_write_tokens;
    res_.cost_usd += reply->cost_usd;
    if (!ok && (e.kind == "interrupted" || e.kind == "deadline" || sandbox::stop_requested())) {
      tw_.event("llm_stopped", llm_failure_event(turn, e, *reply));
      return Step::cut;
    }
    if (!ok) {
      tw_.event("llm_error", llm_failure_event(turn, e, *reply));
      res_.exit_reason = "llm_error";
      res_.llm_error = e;
      return Step::end;
    }
    tw_.event("reply", reply_event(turn, *reply));
    emit(turn, "reply", reply->text, reply->usage.output_tokens);
    return Step::ok;
  }

  bool format_error(int turn, const std::string& why, std::string* err) {
    ++format_errors_;
    tw_.event("format_error", {{"turn", turn}, {"error", why}, {"consecutive", format_errors_}});
    emit(turn, "format_error", why);
    if (format_errors_ >= cfg_.max_format_errors) {
      res_.exit_reason = "format_errors";
      return true;
    }
    std::string msg;
    if (!render_format_error(cfg_.prompts_dir, why, cfg_.max_format_errors - format_errors_, &msg,
                             err))
      return false;
    msgs_.push_back({"user", msg});
    return true;
  }

  // What the commands are told about. Not the problem's folder: it holds the expert
  // solutions and examples, and the prompt already carries all the model may read of it.
  bool init_env(std::string* err) {
    std::vector<std::string> env = {
        "KF_PROBLEM=" + cfg_.eval.problem.name, "KF_INCLUDE=" + cfg_.eval.paths.include_dir,
        "KF_WORLD=" + std::to_string(cfg_.eval.world),
        "KF_BACKEND=" + std::string(sandbox::backend_name(cfg_.eval.backend))};
    env.insert(env.end(), cfg_.agent_env.begin(), cfg_.agent_env.end());
    return env_.init(cfg_.workspace + "/agent", env, cfg_.command_timeout_s, err);
  }

  // Agent mode: runs one command; on a submission, *source is the workspace's kernel.
  Step command(int turn, const std::string& proposed, std::string* source, bool* submitted,
               std::string* err) {
    tw_.event("command", {{"turn", turn}, {"command", proposed}});
    CommandDecision cd = obs_.confirm_command(turn, proposed);
    if (sandbox::stop_requested()) return Step::cut;
    if (cd.kind == CommandDecision::reject) return reject_command(turn, cd.reason, err);
    std::string cmd = proposed, edited_note;
    if (cd.kind == CommandDecision::edit && cd.command != proposed) {
      cmd = cd.command;
      tw_.event("command_edited", {{"turn", turn}, {"command", cmd}});
      if (!render_prompt_file(cfg_.prompts_dir, "command_edited.md", {{"command", cmd}},
                              &edited_note, err))
        return Step::fail;
    }
    emit(turn, "command", cmd);
    BashResult r =
        env_.run(cmd, [&](const std::string& out) { emit(turn, "command_output", out); });
    if (sandbox::stop_requested())
      return Step::cut;  // its tree is dead; its output is not the model's business
    tw_.event("observation", observation_event(turn, r));
    emit(turn, "observation",
         fmt::format("exit {}{}", r.returncode, r.timed_out ? " (timed out)" : ""), 0, nullptr,
         r.output);
    std::string extra;
    if (r.submitted) {
      std::string path = env_.workspace() + "/kernel" + eval::kernel_extension(cfg_.eval.backend),
                  e2;
      if (read_text_file(path, source, &e2)) {
        *submitted = true;
        return Step::ok;
      }
      extra = "You submitted, but there is no kernel" + eval::kernel_extension(cfg_.eval.backend) +
              " in the workspace: write it first, then submit.";
    }
    if (r.timed_out)
      extra += fmt::format("The command was killed after {:g} s.", cfg_.command_timeout_s);
    std::string msg;
    if (!render_prompt_file(
            cfg_.prompts_dir, "observation.md",
            {{"returncode", std::to_string(r.returncode)},
             {"output", r.output.empty() || r.output.back() == '\n' ? r.output : r.output + "\n"},
             {"elided", (r.elided_chars ? fmt::format("({} characters elided from the middle)\n",
                                                      r.elided_chars)
                                        : "") +
                            extra}},
            &msg, err))
      return Step::fail;
    msgs_.push_back({"user", edited_note + msg});
    return Step::ok;
  }

  // --confirm: the person rejected the command; it never ran, and the model is told so
  // (with the person's reason, when one was given) as that turn's observation.
  Step reject_command(int turn, const std::string& reason, std::string* err) {
    tw_.event("command_rejected", {{"turn", turn}, {"reason", reason}});
    emit(turn, "command_rejected", reason);
    std::string msg;
    if (!render_prompt_file(cfg_.prompts_dir, "command_rejected.md",
                            {{"reason", reason.empty() ? "(no reason given)" : reason}}, &msg, err))
      return Step::fail;
    msgs_.push_back({"user", msg});
    return Step::ok;
  }

  Step evaluate(int turn, const std::string& source, sandbox::Verdict* v, std::string* err) {
    std::string file = fmt::format("{}/turn_{}{}", cfg_.workspace, turn, extension());
    std::ofstream(file, std::ios::binary) << source;
    std::string hash = sandbox::sha256_hex(source);
    tw_.event("candidate", {{"turn", turn}, {"file", file}, {"sha256", hash}, {"source", source}});
    emit(turn, "evaluating", fs::path(file).filename().string());
    auto t0 = std::chrono::steady_clock::now();
    eval::EvalConfig ecfg = cfg_.eval;
    stage_.clear();
    ecfg.on_stage = [&](const std::string& stage) {
      stage_ = stage;
      emit(turn, "evaluating", stage);
    };
    std::string abs = fs::absolute(file).string();
    bool ok = cfg_.foreign ? cfg_.foreign->evaluate(abs, v, err)
                           : eval::evaluate_file(ecfg, abs, sandbox::Role::candidate, v, err);
    // A signal or the deadline killed the build or the ranks: what came back is not the
    // kernel's verdict (a "timeout" that was kforge's doing), so it is not recorded as one.
    if (sandbox::stop_requested()) return Step::cut;
    if (!ok) {
      tw_.event("internal_error", {{"turn", turn}, {"message", *err}});
      return Step::fail;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    tw_.event("verdict", {{"turn", turn},
                          {"sha256", hash},
                          {"verdict", sandbox::verdict_json(*v)},
                          {"seconds", secs}});
    verdicts_.push_back(*v);
    ++res_.candidates;
    res_.last = *v;
    res_.has_last = true;
    res_.last_source = source;
    res_.last_turn = turn;
    if (v->status == sandbox::Status::correct && (!res_.has_best || better_than(*v, res_.best))) {
      res_.has_best = true;
      res_.best = *v;
      res_.best_turn = turn;
      res_.best_source = source;
      res_.best_file = file;
      best_hash_ = hash;
    }
    emit(turn, "verdict", v->summary, res_.tokens_in + res_.tokens_out, v);
    return Step::ok;
  }

  // --profile: the candidate once more under the tool its verdict calls for; what it found
  // joins the feedback, what ran and what it cost goes to the trajectory.
  bool profile(int turn, const sandbox::Verdict& v, std::string* feedback, std::string* err) {
    if (cfg_.profile == ProfileMode::never || cfg_.foreign) return true;  // kforge's ABI only
    std::string file = fmt::format("{}/turn_{}{}", cfg_.workspace, turn,
                                   eval::kernel_extension(cfg_.eval.backend));
    ProfileStep step;
    if (!profile_step(cfg_.eval, cfg_.profile, turn, fs::absolute(file).string(), v, &step, err))
      return (tw_.event("internal_error", {{"turn", turn}, {"message", *err}}), false);
    if (!step.ran || sandbox::stop_requested()) return true;
    tw_.event("profile", step.event);
    emit(turn, "profile",
         fmt::format("{} {} ({:.1f} s)", step.event["tool"].get<std::string>(),
                     step.event["status"].get<std::string>(), step.event["seconds"].get<double>()));
    *feedback += step.feedback;
    return true;
  }

  void finish() {
    res_.seconds = elapsed();
    std::string detail;
    tw_.event("summary", summary_json(res_, best_hash_, &detail));
    emit(res_.turns, "done", detail, res_.tokens_in + res_.tokens_out,
         res_.has_last ? &res_.last : nullptr);
  }

  const SolveConfig& cfg_;
  Model& model_;
  Observer& obs_;
  trace::Writer& tw_;
  SolveResult& res_;
  std::vector<llm::Message> msgs_, logged_;
  std::vector<sandbox::Verdict> verdicts_;
  std::string prev_source_, best_hash_;
  std::string stage_;    // the evaluation's stage, for which phase a signal stopped
  int64_t req_cap_ = 0;  // the next call's output cap from the budgets (0: none)
  int format_errors_ = 0;
  BashEnv env_;
};

}  // namespace

bool solve(const SolveConfig& cfg, Model& model, Observer& obs, trace::Writer& tw, SolveResult* out,
           std::string* err) {
  *out = SolveResult{};
  Run run(cfg, model, obs, tw, out);
  if (run.go(err)) return true;
  // kforge failed: the trajectory still ends with a summary that says so.
  out->exit_reason = "internal_error";
  tw.event("summary", failed_summary_json(*out, *err));
  return false;
}

}  // namespace agent
