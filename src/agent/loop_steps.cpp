// agent/loop_steps.cpp: the steps of a solve run's turn (agent/loop_run.h): the first
// messages, the model call, a reply kforge cannot use, an agent command, the evaluation
// of a candidate and its profile.
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "agent/feedback.h"
#include "agent/loop_json.h"
#include "agent/loop_run.h"
#include "agent/prompt.h"
#include "agent/template.h"
#include "sandbox/deadline.h"
#include "sandbox/interrupt.h"
#include "sandbox/process.h"
#include "sandbox/sha256.h"

namespace agent::detail {

using nlohmann::json;
namespace fs = std::filesystem;

Step Run::ask(int turn, llm::Reply* reply) {
  log_prompt(turn);
  emit(turn, TurnPhase::waiting_model, model_.name());
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
    emit(turn, TurnPhase::streaming, d, tokens >= 0 ? tokens : chars / 4);
  };
  req.on_tokens = [&, turn](int64_t t) {
    tokens = t;
    emit(turn, TurnPhase::streaming, "", t);
  };
  req.on_retry = [&, turn](int attempt, const llm::Error& why) {
    chars = 0;
    emit(turn, TurnPhase::waiting_model,
         fmt::format("retrying (attempt {}): {}", attempt, why.message));
  };
  llm::Error e;
  bool ok = model_.next(req, verdicts_, reply, &e);
  res_.tokens_in += reply->usage.input_tokens;
  res_.tokens_out += reply->usage.output_tokens;
  res_.tokens_cache_read += reply->usage.cache_read_tokens;
  res_.tokens_cache_write += reply->usage.cache_write_tokens;
  res_.cost_usd += reply->cost_usd;
  res_.tokens_estimated = res_.tokens_estimated || reply->usage.estimated;
  if (!ok && (e.kind == llm::ErrorKind::interrupted || e.kind == llm::ErrorKind::deadline ||
              sandbox::stop_requested())) {
    tw_.event(trace::EventType::llm_stopped, llm_failure_event(turn, e, *reply));
    return Step::cut;
  }
  if (!ok) {
    tw_.event(trace::EventType::llm_error, llm_failure_event(turn, e, *reply));
    res_.exit_reason = ExitReason::llm_error;
    res_.llm_error = e;
    return Step::end;
  }
  tw_.event(trace::EventType::reply, reply_event(turn, *reply));
  emit(turn, TurnPhase::reply, reply->text, reply->usage.output_tokens);
  return Step::ok;
}

bool Run::format_error(int turn, const std::string& why, std::string* err) {
  ++format_errors_;
  tw_.event(trace::EventType::format_error,
            {{"turn", turn}, {"error", why}, {"consecutive", format_errors_}});
  emit(turn, TurnPhase::format_error, why);
  if (format_errors_ >= cfg_.max_format_errors) {
    res_.exit_reason = ExitReason::format_errors;
    return true;
  }
  std::string msg;
  if (!render_format_error(cfg_.prompts_dir, why, cfg_.max_format_errors - format_errors_, &msg,
                           err))
    return false;
  push_user(turn, msg);
  return true;
}

// What the commands are told about. Not the problem's folder: it holds the expert
// solutions and examples, and the prompt already carries all the model may read of it.
bool Run::init_env(std::string* err) {
  std::vector<std::string> env = {
      "KF_PROBLEM=" + cfg_.eval.problem.name, "KF_INCLUDE=" + cfg_.eval.paths.include_dir,
      "KF_WORLD=" + std::to_string(cfg_.eval.settings.world),
      "KF_BACKEND=" + std::string(sandbox::backend_name(cfg_.eval.settings.backend))};
  env.insert(env.end(), cfg_.agent_env.begin(), cfg_.agent_env.end());
  return env_.init(cfg_.workspace + "/agent", env, cfg_.command_timeout_s, err);
}

// Agent mode: runs one command; on a submission, *source is the workspace's kernel.
Step Run::command(int turn, const std::string& proposed, std::string* source, bool* submitted,
                  std::string* err) {
  tw_.event(trace::EventType::command, {{"turn", turn}, {"command", proposed}});
  CommandDecision cd = obs_.confirm_command(turn, proposed);
  if (sandbox::stop_requested()) return Step::cut;
  if (cd.kind == CommandDecision::reject) return reject_command(turn, cd.reason, err);
  std::string cmd = proposed, edited_note;
  if (cd.kind == CommandDecision::edit && cd.command != proposed) {
    cmd = cd.command;
    tw_.event(trace::EventType::command_edited, {{"turn", turn}, {"command", cmd}});
    if (!render_prompt_file(cfg_.prompts_dir, "command_edited.md", {{"command", cmd}}, &edited_note,
                            err))
      return Step::fail;
  }
  emit(turn, TurnPhase::command, cmd);
  BashResult r =
      env_.run(cmd, [&](const std::string& out) { emit(turn, TurnPhase::command_output, out); });
  if (sandbox::stop_requested())
    return Step::cut;  // its tree is dead; its output is not the model's business
  tw_.event(trace::EventType::observation, observation_event(turn, r));
  emit(turn, TurnPhase::observation,
       fmt::format("exit {}{}", r.returncode, r.timed_out ? " (timed out)" : ""), 0, nullptr,
       r.output);
  std::string extra;
  if (r.submitted) {
    std::string path = env_.workspace() + "/kernel" +
                       eval::kernel_extension(cfg_.eval.settings.backend),
                e2;
    if (read_text_file(path, source, &e2)) {
      *submitted = true;
      return Step::ok;
    }
    extra = "You submitted, but there is no kernel" +
            eval::kernel_extension(cfg_.eval.settings.backend) +
            " in the workspace: write it first, then submit.";
  }
  if (r.timed_out)
    extra += fmt::format("The command was killed after {:g} s.", cfg_.command_timeout_s);
  std::string msg;
  if (!render_prompt_file(
          cfg_.prompts_dir, "observation.md",
          {{"returncode", std::to_string(r.returncode)},
           {"output", r.output.empty() || r.output.back() == '\n' ? r.output : r.output + "\n"},
           {"elided", (r.elided_chars
                           ? fmt::format("({} characters elided from the middle)\n", r.elided_chars)
                           : "") +
                          extra}},
          &msg, err))
    return Step::fail;
  push_user(turn, edited_note + msg);
  return Step::ok;
}

// --confirm: the person rejected the command; it never ran, and the model is told so
// (with the person's reason, when one was given) as that turn's observation.
Step Run::reject_command(int turn, const std::string& reason, std::string* err) {
  tw_.event(trace::EventType::command_rejected, {{"turn", turn}, {"reason", reason}});
  emit(turn, TurnPhase::command_rejected, reason);
  std::string msg;
  if (!render_prompt_file(cfg_.prompts_dir, "command_rejected.md",
                          {{"reason", reason.empty() ? "(no reason given)" : reason}}, &msg, err))
    return Step::fail;
  push_user(turn, msg);
  return Step::ok;
}

Step Run::evaluate(int turn, const std::string& source, sandbox::Verdict* v, std::string* err) {
  std::string file = fmt::format("{}/turn_{}{}", cfg_.workspace, turn, extension());
  std::ofstream(file, std::ios::binary) << source;
  std::string hash = sandbox::sha256_hex(source);
  tw_.event(trace::EventType::candidate,
            {{"turn", turn}, {"file", file}, {"sha256", hash}, {"source", source}});
  ++res_.candidates;  // a kernel the model wrote, whether or not its eval is cut short
  emit(turn, TurnPhase::evaluating, fs::path(file).filename().string());
  auto t0 = std::chrono::steady_clock::now();
  eval::EvalConfig ecfg = cfg_.eval;
  stage_.clear();
  ecfg.on_stage = [&](const std::string& stage) {
    stage_ = stage;
    emit(turn, TurnPhase::evaluating, stage);
  };
  std::string abs = fs::absolute(file).string();
  bool ok = cfg_.foreign ? cfg_.foreign->evaluate(abs, v, err, &res_.setup_fault)
                         : eval::evaluate_file(ecfg, abs, sandbox::Role::candidate, v, err);
  // A signal or the deadline killed the build or the ranks: what came back is not the
  // kernel's verdict (a "timeout" that was kforge's doing), so it is not recorded as one.
  if (sandbox::stop_requested()) return Step::cut;
  if (!ok) {
    if (res_.setup_fault == SetupFault::none)
      tw_.event(trace::EventType::internal_error, {{"turn", turn}, {"message", *err}});
    else
      tw_.event(trace::EventType::setup_error,
                {{"turn", turn},
                 {"message", *err},
                 {"problem_only", res_.setup_fault == SetupFault::problem}});
    return Step::fail;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  tw_.event(trace::EventType::verdict, {{"turn", turn},
                                        {"sha256", hash},
                                        {"verdict", sandbox::verdict_json(*v)},
                                        {"seconds", secs}});
  verdicts_.push_back(*v);
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
  emit(turn, TurnPhase::verdict, v->summary, res_.tokens_in + res_.tokens_out, v, source);
  return Step::ok;
}

// --profile: the candidate once more under the tool its verdict calls for; what it found
// joins the feedback, what ran and what it cost goes to the trajectory.
bool Run::profile(int turn, const sandbox::Verdict& v, std::string* feedback, std::string* err) {
  if (cfg_.profile == ProfileMode::never || cfg_.foreign) return true;  // kforge's ABI only
  std::string file = fmt::format("{}/turn_{}{}", cfg_.workspace, turn,
                                 eval::kernel_extension(cfg_.eval.settings.backend));
  ProfileStep step;
  if (!profile_step(cfg_.eval, cfg_.profile, turn, fs::absolute(file).string(), v, &step, err))
    return (tw_.event(trace::EventType::internal_error, {{"turn", turn}, {"message", *err}}),
            false);
  if (!step.ran || sandbox::stop_requested()) return true;
  tw_.event(trace::EventType::profile, step.event);
  emit(turn, TurnPhase::profile,
       fmt::format("{} {} ({:.1f} s)", step.event["tool"].get<std::string>(),
                   step.event["status"].get<std::string>(), step.event["seconds"].get<double>()));
  *feedback += step.feedback;
  return true;
}

bool Run::first_messages(std::string* sys, std::string* task, std::string* err) {
  if (cfg_.foreign) {
    if (cfg_.mode != Mode::direct)
      return (*err = cfg_.foreign->suite + ": only --mode direct runs a suite's problems", false);
    *sys = cfg_.foreign->system_prompt, *task = cfg_.foreign->task_prompt;
    return true;
  }
  PromptInputs pin{cfg_.eval,     cfg_.mode,          cfg_.target,
                   cfg_.topology, cfg_.baseline_time, cfg_.prompts_dir};
  return build_system_prompt(pin, sys, err) && build_task_prompt(pin, task, err);
}

}  // namespace agent::detail
