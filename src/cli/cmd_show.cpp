// cli/cmd_show.cpp: see cmd_show.h.
#include "cli/cmd_show.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "agent/budget.h"
#include "cli/commands.h"
#include "llm/provider.h"
#include "trace/trace.h"

namespace cli {

using nlohmann::json;

namespace {

using trace::EventType;

std::string clip(const std::string& s, bool full, size_t n = 600) {
  if (full || s.size() <= n) return s;
  return s.substr(0, n / 2) + fmt::format("\n    [... {} characters ...]\n", s.size() - n) +
         s.substr(s.size() - n / 2);
}

std::string indent(const std::string& s) {
  std::string out = "    ";
  for (char c : s) {
    out += c;
    if (c == '\n') out += "    ";
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out + "\n";
}

// " (R read from the prompt cache, W written to it)": the parts of the input tokens
// priced apart; "" when there are none.
std::string cache_note(int64_t read, int64_t written) {
  if (read == 0 && written == 0) return "";
  std::string s = fmt::format(" ({} read from the prompt cache", read);
  if (written > 0) s += fmt::format(", {} written to it", written);
  return s + ")";
}

// The summary event's lines.
std::string summary_text(const json& e) {
  std::string out;
  out += fmt::format("\n== {}: {} ==\n",
                     e.value("target_met", false) ? "target met" : "target not met",
                     e.value("exit_reason", ""));
  out += fmt::format("turns {}, candidates {}, tokens {} in{} / {} out, ${:.4f}, {:.1f} s\n",
                     e.value("turns", 0), e.value("candidates", 0), e.value("tokens_in", 0),
                     cache_note(e.value("tokens_cache_read", int64_t{0}),
                                e.value("tokens_cache_write", int64_t{0})),
                     e.value("tokens_out", 0), e.value("cost_usd", 0.0), e.value("seconds", 0.0));
  if (e.value("tokens_estimated", false))
    out += llm::estimated_usage_text(
               e.value("tokens_in", int64_t{0}) + e.value("tokens_out", int64_t{0}),
               e.value("cost_usd", 0.0)) +
           "\n";
  if (e.contains("budget") && e["budget"].is_object())
    out += fmt::format("ended by {}: {}\n", e["budget"].value("name", ""),
                       e["budget"].value("text", ""));
  if (e.contains("interrupt") && e["interrupt"].is_object())
    out += fmt::format("ended by {} during the {}\n", e["interrupt"].value("signal", ""),
                       e["interrupt"].value("phase", ""));
  if (e.contains("best") && e["best"].is_object())
    out += fmt::format("best: turn {} ({}), {}\n", e["best"].value("turn", 0),
                       e["best"].value("status", ""), e["best"].value("file", ""));
  return out;
}

// A budget event: which budget, how much of it, and where it ran out: "budget spent:
// max_cost: $0.0150 of --max-cost $0.015 (before the model call)", "(during the eval)".
std::string budget_text(const json& e) {
  agent::BudgetEnd b{e.value("budget", ""), e.value("spent", 0.0), e.value("limit", 0.0),
                     e.value("note", "")};
  std::string phase = e.value("phase", "");
  std::string where = phase.empty()                   ? ""
                      : phase.rfind("before", 0) == 0 ? " (" + phase + ")"
                                                      : " (during the " + phase + ")";
  return fmt::format("  budget spent: {}: {}{}\n", b.name, b.text(), where);
}

// A --profile event: the tool, how it went and what it cost, then its lines for the model.
std::string profile_text(const json& e) {
  std::string s = fmt::format("  profile: {} {} ({:.1f} s){}\n", e.value("tool", ""),
                              e.value("status", ""), e.value("seconds", 0.0),
                              e.value("note", "").empty() ? "" : ": " + e.value("note", ""));
  if (e.value("status", "") == "ran" && e.contains("lines"))
    for (const auto& l : e["lines"]) s += "    " + l.get<std::string>() + "\n";
  return s;
}

// The events the reader typed (trace::Run), by their position in the trajectory.
struct TypedEvents {
  std::map<size_t, const trace::ReplyEvent*> replies;
  std::map<size_t, const trace::CandidateEvent*> candidates;
  std::map<size_t, const trace::VerdictEvent*> verdicts;
  explicit TypedEvents(const trace::Run& run) {
    for (auto& r : run.replies) replies[r.event] = &r;
    for (auto& c : run.candidates) candidates[c.event] = &c;
    for (auto& v : run.verdicts) verdicts[v.event] = &v;
  }
};

template <class T>
const T* at(const std::map<size_t, const T*>& m, size_t i) {
  auto it = m.find(i);
  return it == m.end() ? nullptr : it->second;
}

std::string header_text(const json& h) {
  std::string out = fmt::format("{}  {}  model {}  mode {}\n", h.value("started", ""),
                                h.value("problem", ""), h.value("model", ""), h.value("mode", ""));
  const json& ev = h["config"]["eval"];
  if (ev.is_object())
    out +=
        fmt::format("world {}, {} backend, target {}x, max {} turns; topology: {}\n",
                    ev.value("world", 0), ev.value("backend", ""), h["config"].value("target", 1.0),
                    h["config"].value("max_turns", 0), h["topology"].value("source", ""));
  return out;
}

// The model's side of a turn: its prompt, its reply, what it ran and submitted.
std::string exchange_text(const json& e, EventType type, size_t i, const TypedEvents& typed,
                          bool full) {
  if (type == EventType::prompt) {
    std::string out =
        fmt::format("\n== turn {} (t={:.1f}s) == prompt: {} messages, {} new\n", e.value("turn", 0),
                    e.value("t", 0.0), e.value("messages", 0), e["new"].size());
    for (auto& m : e["new"])
      if (m.value("role", "") != "assistant")
        out += fmt::format("  [{}]\n{}", m.value("role", ""),
                           indent(clip(m.value("content", ""), full)));
    return out;
  }
  if (const trace::ReplyEvent* r = type == EventType::reply ? at(typed.replies, i) : nullptr)
    return fmt::format("  reply: {} in{} / {} out tokens{}, ${:.4f}, {} attempt(s), {:.1f} s\n{}",
                       r->input_tokens, cache_note(r->cache_read_tokens, r->cache_write_tokens),
                       r->output_tokens, r->usage_estimated ? " (estimated)" : "", r->cost_usd,
                       r->attempts, r->seconds, indent(clip(r->text, full)));
  if (type == EventType::format_error)
    return fmt::format("  format error ({} in a row): {}\n", e.value("consecutive", 0),
                       e.value("error", "").substr(0, 200));
  if (type == EventType::command)
    return fmt::format("  $ {}\n", clip(e.value("command", ""), full, 300));
  if (type == EventType::observation)
    return fmt::format("  exit {}{}\n{}", e.value("returncode", 0),
                       e.value("submitted", false) ? " (submitted)" : "",
                       indent(clip(e.value("output", ""), full, 400)));
  if (const trace::CandidateEvent* c =
          type == EventType::candidate ? at(typed.candidates, i) : nullptr)
    return fmt::format("  candidate {} ({} lines, sha256 {})\n", c->file,
                       std::count(c->source.begin(), c->source.end(), '\n'),
                       c->sha256.substr(0, 12));
  if (const trace::VerdictEvent* v = type == EventType::verdict ? at(typed.verdicts, i) : nullptr)
    return fmt::format("  verdict: {} ({:.1f} s)\n", v->verdict.summary, v->seconds);
  return "";
}

// What the person did, and what stopped or interrupted the run.
std::string event_text(const json& e, size_t i, const TypedEvents& typed, bool full) {
  const EventType type = trace::event_type(e);
  if (type == EventType::command_edited)
    return fmt::format("  user edited the command; ran instead: {}\n",
                       clip(e.value("command", ""), full, 300));
  if (type == EventType::command_rejected)
    return fmt::format("  user rejected the command: {}\n", e.value("reason", ""));
  if (type == EventType::hint) return fmt::format("  user hint: {}\n", e.value("text", ""));
  if (type == EventType::decision)
    return e.value("action", "") == "next" ? ""
                                           : fmt::format("  user: {}\n", e.value("action", ""));
  if (type == EventType::llm_error)
    return fmt::format("  model error: {}: {} ({} attempt(s))\n", e.value("kind", ""),
                       e.value("message", ""), e.value("attempts", 0));
  if (type == EventType::interrupted)
    return fmt::format("  interrupted: {} stopped the {}\n", e.value("signal", ""),
                       e.value("phase", ""));
  if (type == EventType::budget) return budget_text(e);
  if (type == EventType::resumed)
    return fmt::format("\n== resumed: part {}, from turn {} (the part before: {}) ==\n",
                       e.value("part", 0), e.value("from_turn", 0), e.value("after", ""));
  if (type == EventType::rewind)
    return e.value("done", false)
               ? fmt::format("  user: back to turn {}'s kernel for turn {}\n",
                             e.value("to_turn", 0), e.value("turn", 0))
               : fmt::format("  user: back to turn {} (not in the conversation; nothing changed)\n",
                             e.value("to_turn", 0));
  if (type == EventType::profile) return profile_text(e);
  if (type == EventType::internal_error || type == EventType::setup_error)
    return fmt::format("  {}: {}\n",
                       type == EventType::setup_error ? "setup error" : "kforge error",
                       e.value("message", ""));
  if (type == EventType::summary) return summary_text(e);
  return exchange_text(e, type, i, typed, full);
}

}  // namespace

CLI::App* add_show_command(CLI::App& app, ShowArgs* a) {
  CLI::App* s = app.add_subcommand("show", "print a trajectory readably");
  s->add_option("file", a->file, "a trajectory (runs/<problem>/*.jsonl)")->required();
  s->add_flag("--full", a->full, "print prompts and replies whole");
  return s;
}

std::string render_trajectory(const trace::Run& run, bool full, const std::string& warn) {
  const trace::Trajectory& t = run.raw;
  const TypedEvents typed(run);
  std::string out = header_text(t.header);
  for (size_t i = 0; i < t.events.size(); ++i) out += event_text(t.events[i], i, typed, full);
  if (!t.complete)
    out +=
        fmt::format("\n(the run did not finish: no summary{})\n", warn.empty() ? "" : "; " + warn);
  return out;
}

int cmd_show(const ShowArgs& a) {
  trace::Run run;
  std::string err, warn;
  if (!trace::read_run(a.file, &run, &err, &warn)) {
    fmt::print(stderr, "kforge show: {}\n", err);
    return kBadInput;
  }
  fmt::print("{}", render_trajectory(run, a.full, warn));
  return kOk;
}

}  // namespace cli
