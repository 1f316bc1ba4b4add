// src/sweep/outcome.cpp: see outcome.h.
#include "sweep/outcome.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "trace/trace.h"
#include "verdict_status.h"

namespace sweep {

using json = nlohmann::json;

bool first_correct(const std::string& trajectory, FirstCorrect* out, std::string* err) {
  *out = FirstCorrect{};
  trace::Trajectory t;
  if (!trace::read_trajectory(trajectory, &t, err)) return false;
  long long tokens = 0;
  double cost = 0;
  for (const json& e : t.events) {
    std::string type = e.value("type", "");
    if (type == "reply") {
      const json u = e.value("usage", json::object());
      tokens += u.value("input_tokens", 0LL) + u.value("output_tokens", 0LL);
      cost += e.value("cost_usd", 0.0);
    } else if (type == "verdict" && e.contains("verdict") &&
               e["verdict"].value("status", "") == sandbox::status_name(sandbox::Status::correct)) {
      *out = {e.value("turn", 0), tokens, cost};
      return true;
    }
  }
  return false;
}

namespace {

void fail(Record* r, const std::string& why, const std::string& output) {
  r->state = "failed";
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
  r->trajectory = s.value("trajectory", "");
  r->kernel = s.value("kernel", "");
  // 0 and 1 are outcomes (target met, or not); 3 is kforge's or the provider's failure
  // and 128+N a signal: those samples say nothing about the model, and run again.
  if (exit_code != 0 && exit_code != 1)
    return fail(r, fmt::format("kforge solve exited {} ({})", exit_code, s.value("message", "")),
                "");
  r->state = "done";
  r->status = v.value("status", "no_candidate");
  r->correct = r->status == sandbox::status_name(sandbox::Status::correct);
  // A speed only where one was measured: the host backend's and emulated ranks' times
  // are no speed (sandbox::times_meaningful), whatever ratio the verdict carries.
  bool measured =
      v.value("backend", "") == "cuda" && !v.value("emulated", false) && v.value("timed", false);
  r->speedup = measured ? v.value("speedup", 0.0) : 0.0;
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
