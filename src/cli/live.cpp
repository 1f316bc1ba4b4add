// cli/live.cpp: see live.h. The events of a run, as the live view prints them; the menu,
// the confirmation and the pager are in live_menu.cpp.
#include "cli/live.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "cli/event_text.h"
#include "cli/line_diff.h"
#include "cli/live_screen.h"
#include "cli/term_text.h"
#include "sandbox/text.h"

namespace cli {

using sandbox::trim;

namespace {

const char* kDim = "\033[2m";
const char* kBold = "\033[1m";
const char* kYellow = "\033[33m";
const char* kCyan = "\033[36m";

// The last `n` lines of text (a partial last line included), empty lines skipped.
std::vector<std::string> last_lines(const std::string& text, size_t n) {
  std::vector<std::string> all = split_lines(printable(text)), out;
  for (auto it = all.rbegin(); it != all.rend() && out.size() < n; ++it)
    if (!trim(*it).empty()) out.insert(out.begin(), *it);
  return out;
}

// "… 1 more line", "… 36 more lines of cpp".
std::string more_lines(size_t n, const std::string& lang) {
  return fmt::format("… {} more line{}{}", n, n == 1 ? "" : "s", lang.empty() ? "" : " of " + lang);
}

}  // namespace

MenuChoice parse_menu(const std::string& raw) {
  std::string line = trim(raw);
  if (line.empty()) return {MenuChoice::next, ""};
  size_t sp = line.find_first_of(" \t");
  std::string word = line.substr(0, sp),
              rest = sp == std::string::npos ? "" : trim(line.substr(sp));
  for (auto& c : word) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  auto is = [&](const char* shortw, const char* longw) { return word == shortw || word == longw; };
  if (is("h", "hint"))
    return rest.empty() ? MenuChoice{MenuChoice::ask_hint, ""} : MenuChoice{MenuChoice::hint, rest};
  if (is("g", "back")) {
    // "g 3": turn 3's kernel as the base of the next turn.
    char* end = nullptr;
    long t = rest.empty() ? 0 : std::strtol(rest.c_str(), &end, 10);
    if (t < 1 || *end != '\0' || t > 1000000) return {MenuChoice::unknown, line};
    MenuChoice m{MenuChoice::rewind, rest};
    m.turn = static_cast<int>(t);
    return m;
  }
  if (!rest.empty()) return {MenuChoice::unknown, line};
  if (is("b", "best")) return {MenuChoice::best_diff, ""};
  if (is("?", "help")) return {MenuChoice::help, ""};
  if (is("s", "show")) return {MenuChoice::show, ""};
  if (is("d", "diff")) return {MenuChoice::diff, ""};
  if (is("v", "view")) return {MenuChoice::view, ""};
  if (is("a", "accept")) return {MenuChoice::accept, ""};
  if (is("r", "retry")) return {MenuChoice::retry, ""};
  if (is("q", "quit")) return {MenuChoice::quit, ""};
  return {MenuChoice::unknown, line};
}

std::string number_lines(const std::string& text) {
  auto lines = split_lines(text);
  int width = static_cast<int>(std::to_string(lines.size()).size());
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i)
    out += fmt::format("{:>{}}  {}\n", i + 1, width, lines[i]);
  return out;
}

std::vector<std::string> collapse_reply(const std::string& reply, bool agent_mode, size_t prose,
                                        size_t code) {
  std::vector<std::string> out, lines = split_lines(printable(reply));
  size_t prose_seen = 0, code_seen = 0;
  bool in_code = false;
  std::string lang;
  auto flush_prose = [&] {
    if (prose_seen > prose) out.push_back(more_lines(prose_seen - prose, ""));
    prose_seen = 0;
  };
  for (const std::string& raw : lines) {
    std::string t = trim(raw);
    if (t.rfind("```", 0) == 0) {
      if (!in_code) {
        flush_prose();
        in_code = true, code_seen = 0, lang = trim(t.substr(3));
        if (!agent_mode) out.push_back(raw);
      } else {
        in_code = false;
        if (!agent_mode && code_seen > code) out.push_back(more_lines(code_seen - code, lang));
        if (!agent_mode) out.push_back(raw);
      }
      continue;
    }
    if (in_code) {
      if (!agent_mode && ++code_seen <= code) out.push_back(raw);
      continue;
    }
    if (t.empty()) continue;
    if (++prose_seen <= prose) out.push_back(raw);
  }
  if (in_code && !agent_mode && code_seen > code)  // an unclosed block: cut off mid-reply
    out.push_back(more_lines(code_seen - code, lang));
  flush_prose();
  return out;
}

const char* status_sgr(sandbox::Status status) {
  if (status == sandbox::Status::correct) return "\033[32m";
  if (status == sandbox::Status::mismatch || status == sandbox::Status::unstable) return "\033[33m";
  return "\033[31m";
}

LiveView::LiveView(FILE* in, FILE* out, bool color, bool confirm)
    : in_(in),
      out_(out),
      color_(color),
      confirm_(confirm),
      screen_(std::make_unique<LiveScreen>(in, out, color)) {}

LiveView::~LiveView() = default;

// Text wrapped to the terminal, continuation lines indented.
void LiveView::print(const std::string& text, const char* sgr, const std::string& indent) {
  screen_->print(wrap_text(printable(text), screen_->cols() > 1 ? screen_->cols() - 1 : 1, indent),
                 sgr);
}

void LiveView::header(const std::string& title, const HeaderRows& rows) {
  print(title, kBold);
  size_t label = 0;
  for (auto& [k, v] : rows) label = std::max(label, k.size());
  std::string pad(label + 2, ' ');
  for (auto& [k, v] : rows) {
    std::string line = k + std::string(label + 2 - k.size(), ' ') + v;
    if (v.find(' ') == std::string::npos)  // a path: wrapped after a '/', under its column
      screen_->print(
          wrap_path(printable(line), screen_->cols() > 1 ? screen_->cols() - 1 : 1, pad));
    else
      print(line, nullptr, pad);
  }
}

// The first line wrapped; the others name files, which the terminal wraps (a newline in
// the middle of a path would break copying it).
void LiveView::print_end(const std::vector<std::string>& lines, bool good) {
  screen_->pause();
  screen_->print({""});
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == 0)
      print(lines[i], good ? "\033[1;32m" : kBold, "  ");
    else
      screen_->print({printable(lines[i])});
  }
}

// " · 1,234 tokens · $0.0123", or "" before anything was spent.
std::string LiveView::spend_text(int64_t tokens, double cost) const {
  if (tokens == 0 && cost == 0) return "";
  std::string s = " · " + group_digits(tokens) + " tokens";
  if (cost > 0) s += fmt::format(" · ${:.4f}", cost);
  return s;
}

// A rule at the start of each turn, and the hints that go with its prompt.
void LiveView::turn_opens(int turn) {
  if (turn == turn_) return;
  turn_ = turn;
  size_t width = std::min<size_t>(screen_->cols() > 1 ? screen_->cols() - 1 : 1, 72);
  // A retry asks the same prompt again under the next turn's number: the rule says so.
  std::string rule = retry_of_ ? fmt::format("── turn {} · retry of turn {} ", turn, retry_of_)
                               : fmt::format("── turn {} ", turn);
  retry_of_ = 0;
  while (display_width(rule) < width) rule += "─";
  screen_->print({"", rule}, kDim);
  for (auto& [t, h] : hints_)
    if (t == turn) print("with your hint: " + h, kCyan);
}

void LiveView::streamed(const agent::TurnEvent& ev) {
  stream_ += ev.detail;
  cost_ = ev.cost_usd;
  screen_->update_status(fmt::format("turn {} · {} is writing{}", ev.turn,
                                     model_.empty() ? "the model" : model_,
                                     spend_text(ev.tokens, 0)));
  if (!ev.detail.empty()) screen_->set_preview(last_lines(stream_, 3));
}

// "$ " and the command's lines as they are (the terminal wraps them: a newline inserted
// into a command would change what it reads as), at most `max_lines` of them.
void LiveView::print_command(const std::string& command, size_t max_lines) {
  std::vector<std::string> lines = split_lines(printable(trim(command)));
  std::vector<std::string> shown;
  size_t width = screen_->cols() > 1 ? screen_->cols() - 1 : 1;
  for (size_t i = 0; i < lines.size() && i < max_lines; ++i)  // wrapped where words end
    for (const std::string& w : wrap_text((i == 0 ? "$ " : "  ") + lines[i], width, "    "))
      shown.push_back(w);
  screen_->print(shown, kBold);
  if (lines.size() > max_lines) print(more_lines(lines.size() - max_lines, "bash"), kDim);
}

void LiveView::observed(const agent::TurnEvent& ev) {
  screen_->end_step();
  print("→ " + ev.detail, ev.detail == "exit 0" ? kDim : kYellow);
  std::vector<std::string> all = split_lines(printable(ev.output));
  while (!all.empty() && trim(all.back()).empty()) all.pop_back();
  size_t keep = 8, from = all.size() > keep ? all.size() - keep : 0;
  if (from > 0) print(fmt::format("  … {} lines before these", from), kDim);
  size_t width = screen_->cols() > 1 ? screen_->cols() - 1 : 1;
  std::vector<std::string> tail;
  for (size_t i = from; i < all.size(); ++i) tail.push_back(fit_width("  │ " + all[i], width));
  screen_->print(tail, kDim);
}

// A model call begins: its detail names the model (the first time) or says why it is
// asked again (a retry, wrapped whole with its advice at the end).
void LiveView::waiting(const agent::TurnEvent& ev) {
  if (model_.empty() && !ev.detail.empty()) model_ = ev.detail;
  turn_opens(ev.turn);
  stream_.clear();
  if (ev.detail != model_)
    print(fmt::format("turn {} · waiting on {} · {}", ev.turn,
                      model_.empty() ? "the model" : model_, ev.detail),
          kYellow);
  screen_->start_step(fmt::format("turn {} · waiting on {}{}", ev.turn,
                                  model_.empty() ? "the model" : model_,
                                  spend_text(run_tokens_, ev.cost_usd)));
}

void LiveView::on_event(const agent::TurnEvent& ev) {
  using P = agent::TurnPhase;
  const P p = ev.phase;
  if (p == P::waiting_model) {
    waiting(ev);
  } else if (p == P::streaming) {
    streamed(ev);
  } else if (p == P::reply) {
    screen_->end_step();
    last_reply_ = ev.detail;
    cost_ = ev.cost_usd;
    size_t width = screen_->cols() > 1 ? screen_->cols() - 1 : 1;
    std::vector<std::string> lines;
    for (const std::string& l : collapse_reply(ev.detail, agent_))
      lines.push_back(fit_width("  " + l, width));
    print(fmt::format("{} replied ({} tokens{})", model_.empty() ? "the model" : model_,
                      group_digits(ev.tokens), agent_ ? "" : "; v at the menu shows all of it"),
          kDim);
    screen_->print(lines);
  } else if (p == P::command) {
    turn_opens(ev.turn);
    if (ev.detail != confirmed_) print_command(ev.detail, 12);  // else just shown whole
    confirmed_.clear();
    command_out_.clear();
    screen_->start_step(fmt::format("turn {} · running the command", ev.turn));
  } else if (p == P::command_output) {
    command_out_ += ev.detail;  // the command's tail, live, above the clock
    if (command_out_.size() > 65536) command_out_.erase(0, command_out_.size() - 65536);
    screen_->set_preview(last_lines(command_out_, 3));
  } else if (p == P::observation) {
    command_out_.clear();
    observed(ev);
  } else if (p == P::command_rejected) {
    print("rejected; the model is told" + (ev.detail.empty() ? "" : ": " + ev.detail), kYellow);
  } else if (p == P::evaluating) {
    std::string s = status_text(ev, model_);
    if (screen_->active())
      screen_->update_status(s);  // a stage of the same eval: the clock runs on
    else
      screen_->start_step(s);
  } else if (p == P::verdict) {
    screen_->end_step();
    if (!ev.output.empty()) kernels_[ev.turn] = ev.output;
    run_tokens_ = ev.tokens;
    cost_ = ev.cost_usd;
    std::string s = ev.verdict ? (ev.verdict->summary.empty() ? sandbox::summarize(*ev.verdict)
                                                              : ev.verdict->summary)
                               : ev.detail;
    print(fmt::format("turn {}: {}", ev.turn, trim(s)),
          ev.verdict ? status_sgr(ev.verdict->status) : nullptr);
    if (ev.tokens > 0)
      print("spent so far: " + spend_text(ev.tokens, ev.cost_usd).substr(std::strlen(" · ")), kDim);
  } else if (p == P::hint) {
    hints_.push_back({ev.turn, ev.detail});
    print(fmt::format("hint noted: it goes with the prompt of turn {}", ev.turn), kCyan);
  } else if (p == P::format_error) {
    screen_->end_step();
    print("the reply could not be used: " + ev.detail + " (the model is told and asked again)",
          kYellow);
  } else if (p == P::budget) {
    screen_->end_step();
    print("budget spent: " + ev.detail, kYellow);
  } else if (p == P::resumed) {
    best_ = ev.output;
    cost_ = ev.cost_usd;
    print(status_text(ev, model_), kCyan);
  } else if (p == P::interrupted || p == P::done) {
    screen_->end_step();  // interrupted() and the end of the run say it, with what next
  } else {
    print(status_text(ev, model_));
  }
}

}  // namespace cli
