// src/sweep/outcome.cpp: see outcome.h.
#include "sweep/outcome.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "sandbox/verdict_read.h"
#include "trace/run.h"

namespace sweep {

using json = nlohmann::json;

bool first_correct(const std::string& trajectory, FirstCorrect* out, std::string* err) {
  *out = FirstCorrect{};
  trace::Run run;
  if (!trace::read_run(trajectory, &run, err)) return false;
  // The replies before the first correct verdict: a reply's turn is the turn of the
  // candidate it led to, and a turn's reply comes before its verdict.
  for (const trace::VerdictEvent& v : run.verdicts) {
    if (v.verdict.status != sandbox::Status::correct) continue;
    long long tokens = 0;
    double cost = 0;
    for (const trace::ReplyEvent& r : run.replies)
      if (r.turn <= v.turn) tokens += r.input_tokens + r.output_tokens, cost += r.cost_usd;
    *out = {v.turn, tokens, cost};
    return true;
  }
  return false;
}

namespace {

void fail(Record* r, const std::string& why, const std::string& output) {
  r->state = SampleState::failed;
  r->status = "error";
  r->correct = false;
  std::string tail = output.size() > 600 ? output.substr(output.size() - 600) : output;
  r->message = tail.empty() ? why : why + ": " + tail;
}

}  // namespace

void read_outcome(const std::string& dir, int exit_code, const std::string& output, Record* r) {
  r->exit_code = exit_code;
  std::ifstream in(dir + "/verdict.json");
  json v = json::parse(in, nullptr, false);
  if (v.is_discarded() || !v.is_object() || !v.contains("solve"))
    return fail(r, fmt::format("kforge solve exited {} with no verdict.json", exit_code), output);
  const json& s = v["solve"];
  r->turns = s.value("turns", 0);
  r->best_turn = s.value("best_turn", 0);
  r->tokens = s.value("tokens_in", 0LL) + s.value("tokens_out", 0LL);
  r->cost_usd = s.value("cost_usd", 0.0);
  r->usage_estimated = s.value("tokens_estimated", false);
  r->trajectory = s.value("trajectory", "");
  r->kernel = s.value("kernel", "");
  // 2 with this error: the problem's reference fails on this setup, whatever the model
  // wrote, or the builtin cannot write the problem (it has no template space). The sample
  // says nothing about the model, nor would a rerun on this setup.
  const std::string error = s.value("error", "");
  if (exit_code == 2 && (error == "problem_not_runnable" || error == "builtin_unsupported")) {
    r->state = SampleState::not_runnable;
    r->status = "not_runnable";
    r->message = s.value("message", "");
    return;
  }
  // 0 and 1 are outcomes (target met, or not); 3 is kforge's or the provider's failure
  // and 128+N a signal: those samples say nothing about the model, and run again.
  if (exit_code != 0 && exit_code != 1) {
    std::string why = s.value("message", "");
    // The samples run at once share the key's rate limit, which one solve cannot know.
    if (why.rfind("rate_limited:", 0) == 0)
      why += "; the samples run at once share that limit: lower --jobs";
    return fail(r, fmt::format("kforge solve exited {} ({})", exit_code, why), "");
  }
  r->state = SampleState::done;
  // No "status": the run ended before any candidate had a verdict.
  sandbox::Verdict verdict;
  std::string why;
  if (!v.contains("status")) {
    r->status = "no_candidate";
  } else if (!sandbox::verdict_from_json(v, &verdict, &why)) {
    return fail(r, dir + "/verdict.json: " + why, "");
  } else {
    r->status = sandbox::status_name(verdict.status);
  }
  r->correct = v.contains("status") && verdict.status == sandbox::Status::correct;
  // A speed only where one was measured: the host backend's and emulated ranks' times
  // are no speed (sandbox::times_meaningful), whatever ratio the verdict carries.
  bool measured = verdict.backend == sandbox::Backend::cuda && !verdict.emulated && verdict.timed;
  r->speedup = measured ? verdict.speedup : 0.0;
  r->speed_confirmed = verdict.audit.check != sandbox::TimeCheck::refuted;
  FirstCorrect fc;
  std::string err;
  if (r->correct && first_correct(r->trajectory, &fc, &err)) {
    r->first_correct_turn = fc.turn;
    r->tokens_to_correct = fc.tokens;
    r->cost_to_correct = fc.cost_usd;
  } else if (r->correct) {  // no trajectory to read: the best kernel's turn, the run's spend
    r->first_correct_turn = r->best_turn;
    r->tokens_to_correct = r->tokens;
    r->cost_to_correct = r->cost_usd;
  }
}

}  // namespace sweep
