// cli/event_text.cpp: see event_text.h.
#include "cli/event_text.h"

#include <fmt/format.h>

#include "cli/term_text.h"
#include "sandbox/text.h"
#include "sandbox/verdict.h"

namespace cli {

using sandbox::trim;

std::string exit_reason_text(agent::ExitReason r) {
  using R = agent::ExitReason;
  switch (r) {
    case R::none:
      return "it is still running";
    case R::target:
      return "a kernel met the target";
    case R::max_turns:
      return "every turn --max-turns allows was used";
    case R::max_tokens:
      return "the --max-tokens budget was spent";
    case R::max_cost:
      return "the --max-cost budget was spent";
    case R::max_wall:
      return "the --max-wall time ran out";
    case R::format_errors:
      return "the model's replies could not be used three times in a row";
    case R::accepted:
      return "you accepted a kernel";
    case R::quit:
      return "you quit";
    case R::interrupted:
      return "a signal stopped it";
    case R::llm_error:
      return "the model's provider failed";
    case R::internal_error:
      return "kforge itself failed";
    case R::setup_error:
      return "this machine's setup cannot run the problem's jobs";
  }
  return "?";
}

namespace {

// The done event's detail: "REASON: more" or "REASON", in words.
std::string done_text(const std::string& detail) {
  const size_t colon = detail.find(':');
  const std::string word = detail.substr(0, colon);
  agent::ExitReason r;
  std::string s = sandbox::parse_enum(word, &r) ? exit_reason_text(r) : word;
  if (colon != std::string::npos) s += " (" + trim(detail.substr(colon + 1)) + ")";
  return s;
}

}  // namespace

std::string status_text(const agent::TurnEvent& ev, const std::string& model) {
  using P = agent::TurnPhase;
  std::string head = fmt::format("turn {} · ", ev.turn);
  const P p = ev.phase;
  if (p == P::waiting_model || p == P::streaming) {
    // The detail names the model, or says more (a retry and why) about the same wait.
    std::string m = !model.empty() ? model : p == P::waiting_model ? ev.detail : "";
    std::string s = head + "waiting on " + (m.empty() ? "the model" : m);
    if (p == P::waiting_model && !ev.detail.empty() && ev.detail != m)
      s += " · " + one_line(ev.detail, 160);
    if (ev.tokens > 0) s += " · " + group_digits(ev.tokens) + " tokens";
    return s;
  }
  if (p == P::reply) return head + "reply: " + group_digits(ev.tokens) + " tokens";
  if (p == P::evaluating) {
    // A phase of the evaluation ("compiling", "running 2 ranks") as is; else the file.
    std::string d = one_line(ev.detail);
    for (const char* verb : {"compiling", "running", "checking", "timing", "evaluating"})
      if (d.rfind(verb, 0) == 0) return head + d;
    return head + "evaluating" + (d.empty() ? "" : " " + d);
  }
  if (p == P::verdict) {
    std::string s = ev.verdict ? (ev.verdict->summary.empty() ? sandbox::summarize(*ev.verdict)
                                                              : ev.verdict->summary)
                               : ev.detail;
    s = head + trim(printable(s));
    if (ev.tokens > 0) s += " · " + group_digits(ev.tokens) + " tokens";
    if (ev.cost_usd > 0) s += fmt::format(" · ${:.4f}", ev.cost_usd);
    return s;
  }
  if (p == P::format_error)
    return head + "the reply could not be used: " + one_line(ev.detail, 160);
  if (p == P::command) return head + "$ " + one_line(ev.detail);
  if (p == P::command_rejected) return head + "command rejected: " + one_line(ev.detail);
  if (p == P::observation) return head + "→ " + one_line(ev.detail);
  if (p == P::hint) return head + "your hint goes with this turn's prompt: " + one_line(ev.detail);
  if (p == P::interrupted) return head + "interrupted: " + one_line(ev.detail);
  if (p == P::budget) return head + "budget spent: " + one_line(ev.detail, 160);
  if (p == P::rewind || p == P::resumed) return head + one_line(ev.detail, 200);
  if (p == P::done) return "the run ended: " + done_text(ev.detail);
  return head + sandbox::enum_name(p) + (ev.detail.empty() ? "" : " " + one_line(ev.detail));
}

}  // namespace cli
