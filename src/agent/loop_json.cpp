// agent/loop_json.cpp: see loop_json.h.
#include "agent/loop_json.h"

#include <fmt/core.h>

#include "sandbox/process.h"

namespace agent {

using nlohmann::json;

json usage_json(const llm::Usage& u) {
  return {{"input_tokens", u.input_tokens},
          {"output_tokens", u.output_tokens},
          {"reasoning_tokens", u.reasoning_tokens},
          {"cache_read_tokens", u.cache_read_tokens},
          {"cache_write_tokens", u.cache_write_tokens},
          {"reported", u.reported},
          {"estimated", u.estimated}};
}

const char* action_name(Action a) {
  switch (a) {
    case Action::next:
      return "next";
    case Action::hint:
      return "hint";
    case Action::accept:
      return "accept";
    case Action::retry:
      return "retry";
    case Action::quit:
      return "quit";
    case Action::rewind:
      return "rewind";
  }
  return "next";
}

json prompt_event(int turn, const std::vector<llm::Message>& logged,
                  const std::vector<llm::Message>& msgs) {
  size_t keep = 0;
  while (keep < logged.size() && keep < msgs.size() && logged[keep].role == msgs[keep].role &&
         logged[keep].content == msgs[keep].content)
    ++keep;
  json added = json::array();
  for (size_t i = keep; i < msgs.size(); ++i)
    added.push_back({{"role", msgs[i].role}, {"content", msgs[i].content}});
  return {{"turn", turn}, {"keep", keep}, {"messages", msgs.size()}, {"new", added}};
}

namespace {

// What a run has spent so far: turns, candidates, tokens (cached ones apart) and cost;
// both summaries carry it.
json spent_json(const SolveResult& r) {
  json j = {{"turns", r.turns},
            {"candidates", r.candidates},
            {"tokens_in", r.tokens_in},
            {"tokens_out", r.tokens_out},
            {"tokens_cache_read", r.tokens_cache_read},
            {"tokens_cache_write", r.tokens_cache_write},
            {"cost_usd", r.cost_usd},
            {"tokens_estimated", r.tokens_estimated}};
  // A resumed run: the figures above are totals over every part; this part's apart.
  if (r.part > 1) {
    j["part"] = r.part;
    j["this_part"] = spend_json(this_part(r));
  }
  return j;
}

}  // namespace

Spend this_part(const SolveResult& r) {
  const Spend& p = r.prior;
  return {r.turns - p.turns,
          r.candidates - p.candidates,
          r.tokens_in - p.tokens_in,
          r.tokens_out - p.tokens_out,
          r.tokens_cache_read - p.tokens_cache_read,
          r.tokens_cache_write - p.tokens_cache_write,
          r.cost_usd - p.cost_usd,
          r.seconds - p.seconds};
}

json summary_json(const SolveResult& r, const std::string& best_hash, std::string* detail) {
  json best = nullptr;
  if (r.has_best)
    best = {{"turn", r.best_turn},
            {"sha256", best_hash},
            {"status", r.best.status},
            {"speedup", r.best.speedup},
            {"median_ms", r.best.candidate_time.median_ms},
            {"file", r.best_file}};
  json sum = spent_json(r);
  sum.update({{"exit_reason", r.exit_reason},
              {"target_met", r.target_met},
              {"best", best},
              {"seconds", r.seconds}});
  *detail = exit_reason_name(r.exit_reason);
  if (!r.budget.name.empty()) {
    sum["budget"] = {{"name", r.budget.name},
                     {"spent", r.budget.spent},
                     {"limit", r.budget.limit},
                     {"text", r.budget.text()}};
    *detail += ": " + r.budget.text();
  }
  if (r.interrupt_signal) {
    std::string sig = sandbox::signal_name(r.interrupt_signal);
    sum["interrupt"] = {
        {"signal", sig}, {"signo", r.interrupt_signal}, {"phase", r.interrupt_phase}};
    *detail += fmt::format(" by {} during the {}", sig, sandbox::enum_name(r.interrupt_phase));
  }
  return sum;
}

nlohmann::json solve_config_json(const SolveConfig& c) {
  const eval::EvalConfig& e = c.eval;
  json j = {{"mode", c.mode},
            {"target", c.target},
            {"max_turns", c.max_turns},
            {"max_tokens", c.max_tokens},
            {"max_cost_usd", c.max_cost_usd},
            {"max_wall_s", c.max_wall_s},
            {"max_format_errors", c.max_format_errors},
            {"reply_max_tokens", c.reply_max_tokens},
            {"llm_seed", c.llm_seed},
            {"workspace", c.workspace},
            {"command_timeout_s", c.command_timeout_s},
            {"profile", c.profile}};
  if (c.foreign) {  // the suite's evaluator has its own options; the header names the suite
    j["suite"] = c.foreign->suite;
    j["eval"] = {{"problem", c.foreign->problem}, {"world", e.settings.world}};
    return j;
  }
  // The settings whole, as every job.json has them; replay reads them back
  // (sandbox::settings_from_json), and the machine's name beside them.
  j["eval"] = e.settings;
  j["eval"]["problem"] = e.problem.name;
  j["eval"]["machine"] = e.machine.name;
  return j;
}

json reply_event(int turn, const llm::Reply& r) {
  return {{"turn", turn},
          {"text", r.text},
          {"thinking", r.thinking},
          {"stop_reason", r.stop_reason},
          {"usage", usage_json(r.usage)},
          {"cost_usd", r.cost_usd},
          {"attempts", r.attempts},
          {"seconds", r.seconds},
          {"model", r.model},
          {"request_id", r.request_id}};
}

json llm_failure_event(int turn, const llm::Error& e, const llm::Reply& r) {
  return {{"turn", turn},           {"kind", llm::error_kind_name(e.kind)},
          {"message", e.message},   {"http_status", e.http_status},
          {"attempts", r.attempts}, {"seconds", r.seconds}};
}

json observation_event(int turn, const BashResult& r) {
  return {{"turn", turn},
          {"returncode", r.returncode},
          {"output", r.output},
          {"elided_chars", r.elided_chars},
          {"timed_out", r.timed_out},
          {"submitted", r.submitted}};
}

json failed_summary_json(const SolveResult& r, const std::string& message) {
  json sum = spent_json(r);
  sum.update({{"exit_reason", r.exit_reason}, {"target_met", false}, {"message", message}});
  return sum;
}

}  // namespace agent
