// agent/loop.cpp
#include "agent/loop.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/core.h>

#include "agent/bash_env.h"
#include "agent/feedback.h"
#include "agent/prompt.h"
#include "agent/reply.h"
#include "agent/template.h"
#include "sandbox/sha256.h"

namespace agent {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json usage_json(const llm::Usage& u) {
  return {{"input_tokens", u.input_tokens}, {"output_tokens", u.output_tokens},
          {"reasoning_tokens", u.reasoning_tokens}, {"cache_read_tokens", u.cache_read_tokens},
          {"cache_write_tokens", u.cache_write_tokens}, {"reported", u.reported}};
}

const char* action_name(Action a) {
  switch (a) {
    case Action::next: return "next";
    case Action::hint: return "hint";
    case Action::accept: return "accept";
    case Action::retry: return "retry";
    case Action::quit: return "quit";
  }
  return "next";
}

class Run {
 public:
  Run(const SolveConfig& c, Model& m, Observer& o, trace::Writer& w, SolveResult* r)
      : cfg_(c), model_(m), obs_(o), tw_(w), res_(*r) {}

  bool go(std::string* err) {
    std::error_code ec;
    fs::create_directories(cfg_.workspace, ec);
    if (ec) return (*err = "cannot create the workspace " + cfg_.workspace + ": " + ec.message(), false);
    PromptInputs pin{cfg_.eval, cfg_.mode, cfg_.target, cfg_.topology, cfg_.baseline_time, cfg_.prompts_dir};
    std::string sys, task;
    if (!build_system_prompt(pin, &sys, err) || !build_task_prompt(pin, &task, err)) return false;
    msgs_ = {{"system", sys}, {"user", task}};
    if (cfg_.mode == "agent" && !init_env(err)) return false;
    for (int turn = 1;; ++turn) {
      std::string why;
      if (turn > cfg_.max_turns) why = "max_turns";
      else if (budget_spent(&why)) {}
      if (!why.empty()) {
        res_.exit_reason = why;
        break;
      }
      res_.turns = turn;
      size_t before = msgs_.size();
      llm::Reply reply;
      if (!ask(turn, &reply)) break;
      msgs_.push_back({"assistant", reply.text});
      ParsedReply pr = cfg_.mode == "agent" ? parse_agent_reply(reply.text) : parse_direct_reply(reply.text);
      if (!pr.ok) {
        if (!format_error(turn, pr.error, err)) return false;
        if (!res_.exit_reason.empty()) break;
        continue;
      }
      format_errors_ = 0;
      std::string source = pr.code;
      if (cfg_.mode == "agent") {
        bool submitted = false;
        if (!command(turn, pr.code, &source, &submitted, err)) return false;
        if (!submitted) continue;
      }
      sandbox::Verdict v;
      if (!evaluate(turn, source, &v, err)) return false;
      if (target_met(v, cfg_.target)) {
        res_.exit_reason = "target";
        res_.target_met = true;
        break;
      }
      std::string feedback;
      if (!render_feedback(cfg_.prompts_dir, v, turn, cfg_.target, &feedback, err)) return false;
      Decision d = obs_.between_turns(source, prev_source_, res_.best_source, v);
      tw_.event("decision", {{"turn", turn}, {"action", action_name(d.action)}});
      prev_source_ = source;
      if (d.action == Action::accept) {
        res_.exit_reason = "accepted";
        break;
      }
      if (d.action == Action::quit) {
        res_.exit_reason = "quit";
        break;
      }
      if (d.action == Action::retry) {
        msgs_.resize(before);
        continue;
      }
      if (d.action == Action::hint && !d.hint.empty()) {
        std::string h;
        if (!render_prompt_file(cfg_.prompts_dir, "hint.md", {{"hint", d.hint}}, &h, err)) return false;
        feedback += h;
        tw_.event("hint", {{"turn", turn}, {"text", d.hint}});
      }
      msgs_.push_back({"user", feedback});
    }
    finish();
    return true;
  }

 private:
  double elapsed() const { return tw_.elapsed(); }

  void emit(int turn, const std::string& phase, const std::string& detail, int64_t tokens = 0,
            const sandbox::Verdict* v = nullptr) {
    TurnEvent e;
    e.turn = turn;
    e.phase = phase;
    e.detail = detail;
    e.tokens = tokens;
    e.verdict = v;
    e.cost_usd = res_.cost_usd;
    e.elapsed_s = elapsed();
    obs_.on_event(e);
  }

  bool budget_spent(std::string* why) {
    if (cfg_.max_tokens > 0 && res_.tokens_in + res_.tokens_out >= cfg_.max_tokens) *why = "max_tokens";
    else if (cfg_.max_cost_usd > 0 && res_.cost_usd >= cfg_.max_cost_usd) *why = "max_cost";
    else if (cfg_.max_wall_s > 0 && elapsed() >= cfg_.max_wall_s) *why = "max_wall";
    return !why->empty();
  }

  // The prompt event: what is sent, as the part of the last prompt kept plus what is new.
  void log_prompt(int turn) {
    size_t keep = 0;
    while (keep < logged_.size() && keep < msgs_.size() && logged_[keep].role == msgs_[keep].role &&
           logged_[keep].content == msgs_[keep].content)
      ++keep;
    json added = json::array();
    for (size_t i = keep; i < msgs_.size(); ++i) added.push_back({{"role", msgs_[i].role}, {"content", msgs_[i].content}});
    tw_.event("prompt", {{"turn", turn}, {"keep", keep}, {"messages", msgs_.size()}, {"new", added}});
    logged_ = msgs_;
  }

  bool ask(int turn, llm::Reply* reply) {
    log_prompt(turn);
    emit(turn, "waiting_model", model_.name());
    llm::Request req;
    req.messages = msgs_;
    req.max_tokens = cfg_.reply_max_tokens;
    // Streamed progress for the live view: the server's output-token count where it sends
    // one, else about four characters a token; at most five events a second.
    int64_t chars = 0, tokens = -1;
    auto last = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    auto progress = [&, turn] {
      auto now = std::chrono::steady_clock::now();
      if (now - last < std::chrono::milliseconds(200)) return;
      last = now;
      emit(turn, "streaming", "", tokens >= 0 ? tokens : chars / 4);
    };
    req.on_delta = [&](const std::string& d) { chars += static_cast<int64_t>(d.size()); progress(); };
    req.on_tokens = [&](int64_t t) { tokens = t; progress(); };
    req.on_retry = [&, turn](int attempt, const llm::Error& why) {
      chars = 0;
      emit(turn, "waiting_model", fmt::format("retrying (attempt {}): {}", attempt, why.message));
    };
    llm::Error e;
    bool ok = model_.next(req, verdicts_, reply, &e);
    res_.tokens_in += reply->usage.input_tokens;
    res_.tokens_out += reply->usage.output_tokens;
    res_.cost_usd += reply->cost_usd;
    if (!ok) {
      tw_.event("llm_error", {{"turn", turn}, {"kind", e.kind}, {"message", e.message}, {"http_status", e.http_status},
                              {"attempts", reply->attempts}, {"seconds", reply->seconds}});
      res_.exit_reason = "llm_error";
      res_.llm_error = e;
      return false;
    }
    tw_.event("reply", {{"turn", turn}, {"text", reply->text}, {"thinking", reply->thinking},
                        {"stop_reason", reply->stop_reason}, {"usage", usage_json(reply->usage)},
                        {"cost_usd", reply->cost_usd}, {"attempts", reply->attempts}, {"seconds", reply->seconds},
                        {"model", reply->model}, {"request_id", reply->request_id}});
    return true;
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
        "KF_WORLD=" + std::to_string(cfg_.eval.world), "KF_BACKEND=" + cfg_.eval.backend};
    env.insert(env.end(), cfg_.agent_env.begin(), cfg_.agent_env.end());
    return env_.init(cfg_.workspace + "/agent", env, cfg_.command_timeout_s, err);
  }

  // Agent mode: runs one command; on a submission, *source is the workspace's kernel.
  bool command(int turn, const std::string& cmd, std::string* source, bool* submitted, std::string* err) {
    tw_.event("command", {{"turn", turn}, {"command", cmd}});
    emit(turn, "command", cmd);
    BashResult r = env_.run(cmd);
    tw_.event("observation", {{"turn", turn}, {"returncode", r.returncode}, {"output", r.output},
                              {"elided_chars", r.elided_chars}, {"timed_out", r.timed_out}, {"submitted", r.submitted}});
    emit(turn, "observation", fmt::format("exit {}{}", r.returncode, r.timed_out ? " (timed out)" : ""));
    std::string extra;
    if (r.submitted) {
      std::string path = env_.workspace() + "/kernel" + kernel_extension(cfg_.eval.backend), e2;
      if (read_text_file(path, source, &e2)) {
        *submitted = true;
        return true;
      }
      extra = "You submitted, but there is no kernel" + kernel_extension(cfg_.eval.backend) +
              " in the workspace: write it first, then submit.";
    }
    if (r.timed_out) extra += fmt::format("The command was killed after {:g} s.", cfg_.command_timeout_s);
    std::string msg;
    if (!render_prompt_file(cfg_.prompts_dir, "observation.md",
                            {{"returncode", std::to_string(r.returncode)},
                             {"output", r.output.empty() || r.output.back() == '\n' ? r.output : r.output + "\n"},
                             {"elided", (r.elided_chars ? fmt::format("({} characters elided from the middle)\n", r.elided_chars) : "") + extra}},
                            &msg, err))
      return false;
    msgs_.push_back({"user", msg});
    return true;
  }

  bool evaluate(int turn, const std::string& source, sandbox::Verdict* v, std::string* err) {
    std::string file = fmt::format("{}/turn_{}{}", cfg_.workspace, turn, kernel_extension(cfg_.eval.backend));
    std::ofstream(file, std::ios::binary) << source;
    std::string hash = sandbox::sha256_hex(source);
    tw_.event("candidate", {{"turn", turn}, {"file", file}, {"sha256", hash}, {"source", source}});
    emit(turn, "evaluating", fs::path(file).filename().string());
    auto t0 = std::chrono::steady_clock::now();
    EvalConfig ecfg = cfg_.eval;
    ecfg.on_stage = [&](const std::string& stage) { emit(turn, "evaluating", stage); };
    if (!evaluate_file(ecfg, fs::absolute(file).string(), sandbox::Role::candidate, v, err)) {
      tw_.event("internal_error", {{"turn", turn}, {"message", *err}});
      return false;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    tw_.event("verdict", {{"turn", turn}, {"sha256", hash}, {"verdict", sandbox::verdict_json(*v)}, {"seconds", secs}});
    verdicts_.push_back(*v);
    ++res_.candidates;
    res_.last = *v;
    res_.has_last = true;
    if (v->status == "correct" && (!res_.has_best || better_than(*v, res_.best))) {
      res_.has_best = true;
      res_.best = *v;
      res_.best_turn = turn;
      res_.best_source = source;
      res_.best_file = file;
      best_hash_ = hash;
    }
    emit(turn, "verdict", v->summary, res_.tokens_in + res_.tokens_out, v);
    return true;
  }

  void finish() {
    res_.seconds = elapsed();
    json best = nullptr;
    if (res_.has_best)
      best = {{"turn", res_.best_turn}, {"sha256", best_hash_}, {"status", res_.best.status},
              {"speedup", res_.best.speedup}, {"median_ms", res_.best.candidate_time.median_ms},
              {"file", res_.best_file}};
    tw_.event("summary", {{"exit_reason", res_.exit_reason}, {"target_met", res_.target_met}, {"best", best},
                          {"turns", res_.turns}, {"candidates", res_.candidates}, {"tokens_in", res_.tokens_in},
                          {"tokens_out", res_.tokens_out}, {"cost_usd", res_.cost_usd}, {"seconds", res_.seconds}});
    emit(res_.turns, "done", res_.exit_reason, res_.tokens_in + res_.tokens_out, res_.has_last ? &res_.last : nullptr);
  }

  const SolveConfig& cfg_;
  Model& model_;
  Observer& obs_;
  trace::Writer& tw_;
  SolveResult& res_;
  std::vector<llm::Message> msgs_, logged_;
  std::vector<sandbox::Verdict> verdicts_;
  std::string prev_source_, best_hash_;
  int format_errors_ = 0;
  BashEnv env_;
};

}  // namespace

nlohmann::json solve_config_json(const SolveConfig& c) {
  const EvalConfig& e = c.eval;
  return {{"mode", c.mode}, {"target", c.target}, {"max_turns", c.max_turns}, {"max_tokens", c.max_tokens},
          {"max_cost_usd", c.max_cost_usd}, {"max_wall_s", c.max_wall_s}, {"max_format_errors", c.max_format_errors},
          {"reply_max_tokens", c.reply_max_tokens}, {"workspace", c.workspace},
          {"command_timeout_s", c.command_timeout_s},
          {"eval", {{"problem", e.problem.name}, {"backend", e.backend}, {"world", e.world}, {"sizes", e.sizes},
                    {"overrides", e.overrides}, {"iters", e.iters}, {"warmup", e.warmup}, {"trials", e.trials},
                    {"seed", e.seed}, {"call_limit_s", e.call_limit_s}, {"no_time", e.no_time},
                    {"machine", e.machine.name}}}};
}

bool solve(const SolveConfig& cfg, Model& model, Observer& obs, trace::Writer& tw, SolveResult* out,
           std::string* err) {
  *out = SolveResult{};
  Run run(cfg, model, obs, tw, out);
  if (run.go(err)) return true;
  // kforge failed: the trajectory still ends with a summary that says so.
  out->exit_reason = "internal_error";
  tw.event("summary", {{"exit_reason", out->exit_reason}, {"target_met", false}, {"message", *err},
                       {"turns", out->turns}, {"candidates", out->candidates}, {"tokens_in", out->tokens_in},
                       {"tokens_out", out->tokens_out}, {"cost_usd", out->cost_usd}});
  return false;
}

}  // namespace agent
