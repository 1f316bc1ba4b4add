// agent/resume.cpp: see resume.h.
#include "agent/resume.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "agent/feedback.h"
#include "agent/observer.h"
#include "agent/template.h"

namespace agent {

using nlohmann::json;

namespace {

// The totals of the last summary (an earlier part's end), then what the events after it
// add: a part killed before its summary still counts every reply and candidate on disk.
Spend spend_of(const trace::Trajectory& t, std::string* how) {
  Spend s;
  size_t from = 0;
  *how = "killed";
  for (size_t i = t.events.size(); i-- > 0;) {
    const json& e = t.events[i];
    if (trace::event_type(e) != trace::EventType::summary) continue;
    s.turns = e.value("turns", 0);
    s.candidates = e.value("candidates", 0);
    s.tokens_in = e.value("tokens_in", int64_t{0});
    s.tokens_out = e.value("tokens_out", int64_t{0});
    s.tokens_cache_read = e.value("tokens_cache_read", int64_t{0});
    s.tokens_cache_write = e.value("tokens_cache_write", int64_t{0});
    s.cost_usd = e.value("cost_usd", 0.0);
    s.tokens_estimated = e.value("tokens_estimated", false);
    s.seconds = e.value("seconds", e.value("t", 0.0));
    *how = e.value("exit_reason", "");
    from = i + 1;
    break;
  }
  for (size_t i = from; i < t.events.size(); ++i) {
    const json& e = t.events[i];
    const trace::EventType type = trace::event_type(e);
    s.seconds = std::max(s.seconds, e.value("t", 0.0));
    if (type == trace::EventType::prompt) s.turns = std::max(s.turns, e.value("turn", 0));
    if (type == trace::EventType::candidate) ++s.candidates;
    if (type == trace::EventType::reply && e.contains("usage") && e["usage"].is_object()) {
      s.tokens_in += e["usage"].value("input_tokens", int64_t{0});
      s.tokens_out += e["usage"].value("output_tokens", int64_t{0});
      s.tokens_cache_read += e["usage"].value("cache_read_tokens", int64_t{0});
      s.tokens_cache_write += e["usage"].value("cache_write_tokens", int64_t{0});
      s.cost_usd += e.value("cost_usd", 0.0);
      s.tokens_estimated = s.tokens_estimated || e["usage"].value("estimated", false);
    }
  }
  return s;
}

// The best and the last candidate, and every verdict in order.
void candidates_of(const trace::Run& run, ResumeFrom* r) {
  std::map<std::string, const trace::CandidateEvent*> by_hash;
  for (const trace::CandidateEvent& c : run.candidates) by_hash[c.sha256] = &c;
  for (const trace::VerdictEvent& v : run.verdicts) {
    r->verdicts.push_back(v.verdict);
    auto it = by_hash.find(v.sha256);
    const std::string source = it == by_hash.end() ? "" : it->second->source;
    r->sources[v.turn] = source;
    r->has_last = true;
    r->last = v.verdict;
    r->last_turn = v.turn;
    r->last_source = source;
    if (v.verdict.status == sandbox::Status::correct &&
        (!r->has_best || better_than(v.verdict, r->best))) {
      r->has_best = true;
      r->best = v.verdict;
      r->best_turn = v.turn;
      r->best_source = source;
      r->best_file = it == by_hash.end() ? "" : it->second->file;
      r->best_hash = v.sha256;
    }
  }
}

// The conversation after the last prompt, as the loop built it (agent/loop.cpp): a reply
// and the feedback that follows it are added; a retry or an interrupt takes the turn back
// to that prompt; a hint is appended to the last message.
bool replay_after_prompt(const trace::Trajectory& t, size_t prompt_at, size_t prompt_size,
                         const std::string& prompts_dir, ResumeFrom* r, std::string* err) {
  std::vector<llm::Message>* msgs = &r->messages;
  for (size_t i = prompt_at + 1; i < t.events.size(); ++i) {
    const json& e = t.events[i];
    const trace::EventType type = trace::event_type(e);
    if (type == trace::EventType::rewind && e.value("done", false)) {
      rewind_messages(msgs, r->feedback[e.value("to_turn", 0)]);
    } else if (type == trace::EventType::reply) {
      msgs->push_back({"assistant", e.value("text", "")});
    } else if (type == trace::EventType::feedback) {
      msgs->push_back({"user", e.value("content", "")});
    } else if ((type == trace::EventType::decision && e.value("action", "") == "retry" &&
                !e.contains("after")) ||
               (type == trace::EventType::interrupted &&
                e.value("phase", "") != sandbox::enum_name(TurnPart::menu))) {
      msgs->resize(prompt_size);
    } else if (type == trace::EventType::hint && !msgs->empty()) {
      std::string h;
      if (!render_prompt_file(prompts_dir, "hint.md", {{"hint", e.value("text", "")}}, &h, err))
        return false;
      msgs->back().content += h;
    }
  }
  return true;
}

}  // namespace

bool rewind_messages(std::vector<llm::Message>* msgs, const std::string& feedback) {
  if (feedback.empty()) return false;
  for (size_t i = msgs->size(); i-- > 0;) {
    const llm::Message& m = (*msgs)[i];
    if (m.role == "user" && m.content.compare(0, feedback.size(), feedback) == 0) {
      msgs->resize(i + 1);
      return true;
    }
  }
  return false;
}

json spend_json(const Spend& s) {
  return {{"turns", s.turns},
          {"candidates", s.candidates},
          {"tokens_in", s.tokens_in},
          {"tokens_out", s.tokens_out},
          {"tokens_cache_read", s.tokens_cache_read},
          {"tokens_cache_write", s.tokens_cache_write},
          {"cost_usd", s.cost_usd},
          {"tokens_estimated", s.tokens_estimated},
          {"seconds", s.seconds}};
}

bool resume_from(const trace::Run& run, const std::string& prompts_dir, double target,
                 ResumeFrom* out, std::string* err) {
  const trace::Trajectory& t = run.raw;
  *out = ResumeFrom{};
  out->part = 2 + static_cast<int>(t.of_type(trace::EventType::resumed).size());
  out->spent = spend_of(t, &out->how);
  candidates_of(run, out);
  size_t prompt_at = t.events.size();
  for (size_t i = 0; i < t.events.size(); ++i)
    if (trace::event_type(t.events[i]) == trace::EventType::prompt) prompt_at = i;
  auto prompts = trace::rebuild_prompts(t);
  if (prompts.empty() || prompt_at == t.events.size())
    return (*err = t.path +
                   ": no prompt was sent in this run, so there is no conversation to "
                   "continue: start a new run (kforge solve PROBLEM)",
            false);
  for (auto& [role, content] : prompts.back()) out->logged.push_back({role, content});
  out->messages = out->logged;
  for (const json* e : t.of_type(trace::EventType::feedback))
    out->feedback[e->value("turn", 0)] = e->value("content", "");
  if (!replay_after_prompt(t, prompt_at, out->logged.size(), prompts_dir, out, err)) return false;
  // The run stopped between a reply and its feedback (the target met, or a kill): the
  // feedback of that turn's verdict, as the loop would have sent it; with no verdict
  // (killed mid-eval, or a reply that was never evaluated) the turn is asked again.
  if (out->messages.back().role == "assistant") {
    const int turn = t.events[prompt_at].value("turn", 0);
    if (out->has_last && out->last_turn == turn) {
      std::string fb;
      if (!render_feedback(prompts_dir, out->last, turn, target, &fb, err)) return false;
      out->messages.push_back({"user", fb});
    } else {
      out->messages.pop_back();
    }
  }
  return true;
}

}  // namespace agent
