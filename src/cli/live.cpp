// cli/live.cpp: see live.h. Only the status line is rewritten in place (\r and "erase
// line"); everything else is printed once, so the scrollback keeps every turn.
#include "cli/live.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>

#include "cli/line_diff.h"
#include "sandbox/interrupt.h"

namespace cli {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// The first line, at most `width` characters (a status line must not wrap, or \r would
// return to its last row only).
std::string one_line(const std::string& s, size_t width = 110) {
  std::string l = trim(s.substr(0, s.find('\n')));
  if (l.size() > width) l = l.substr(0, width - 3) + "...";
  return l;
}

const char* kReset = "\033[0m";

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
  if (!rest.empty()) return {MenuChoice::unknown, line};
  if (is("s", "show")) return {MenuChoice::show, ""};
  if (is("d", "diff")) return {MenuChoice::diff, ""};
  if (is("a", "accept")) return {MenuChoice::accept, ""};
  if (is("r", "retry")) return {MenuChoice::retry, ""};
  if (is("q", "quit")) return {MenuChoice::quit, ""};
  return {MenuChoice::unknown, line};
}

std::string group_digits(int64_t n) {
  std::string d = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string number_lines(const std::string& text) {
  auto lines = split_lines(text);
  int width = static_cast<int>(std::to_string(lines.size()).size());
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i)
    out += fmt::format("{:>{}}  {}\n", i + 1, width, lines[i]);
  return out;
}

std::string status_text(const agent::TurnEvent& ev, const std::string& model) {
  std::string head = fmt::format("turn {} · ", ev.turn);
  const std::string& p = ev.phase;
  if (p == "waiting_model" || p == "streaming") {
    // The detail names the model, or says more (a retry and why) about the same wait.
    std::string m = !model.empty() ? model : p == "waiting_model" ? ev.detail : "";
    std::string s = head + "waiting on " + (m.empty() ? "the model" : m);
    if (p == "waiting_model" && !ev.detail.empty() && ev.detail != m)
      s += " · " + one_line(ev.detail, 80);
    if (ev.tokens > 0) s += " · " + group_digits(ev.tokens) + " tokens";
    return s;
  }
  if (p == "evaluating") {
    // A phase of the evaluation ("compiling", "running 2 ranks") as is; else the file.
    std::string d = one_line(ev.detail);
    for (const char* verb : {"compiling", "running", "checking", "timing", "evaluating"})
      if (d.rfind(verb, 0) == 0) return head + d;
    return head + "evaluating" + (d.empty() ? "" : " " + d);
  }
  if (p == "verdict") {
    std::string s = ev.verdict ? (ev.verdict->summary.empty() ? sandbox::summarize(*ev.verdict)
                                                              : ev.verdict->summary)
                               : ev.detail;
    s = head + one_line(s, 160);
    if (ev.tokens > 0) s += " · " + group_digits(ev.tokens) + " tokens";
    if (ev.cost_usd > 0) s += fmt::format(" · ${:.4f}", ev.cost_usd);
    return s;
  }
  if (p == "format_error") return head + "format error: " + one_line(ev.detail);
  if (p == "command") return head + "$ " + one_line(ev.detail);
  if (p == "observation") return head + "→ " + one_line(ev.detail);
  if (p == "interrupted") return head + "interrupted: " + one_line(ev.detail);
  if (p == "budget") return head + "budget spent: " + one_line(ev.detail, 160);
  if (p == "done") return ev.detail.empty() ? "done" : "done: " + one_line(ev.detail, 160);
  return head + p + (ev.detail.empty() ? "" : " " + one_line(ev.detail));
}

const char* status_sgr(sandbox::Status status) {
  if (status == sandbox::Status::correct) return "\033[32m";
  if (status == sandbox::Status::mismatch || status == sandbox::Status::unstable) return "\033[33m";
  return "\033[31m";
}

LiveView::LiveView(FILE* in, FILE* out, bool color) : in_(in), out_(out), color_(color) {}

void LiveView::replace_line(const std::string& text, const char* sgr) {
  bool c = color_ && sgr;
  fmt::print(out_, "\r\033[2K{}{}{}", c ? sgr : "", text, c ? kReset : "");
  fflush(out_);
  open_ = true;
}

void LiveView::print_line(const std::string& text, const char* sgr) {
  bool c = color_ && sgr;
  fmt::print(out_, "{}{}{}{}\n", open_ ? "\r\033[2K" : "", c ? sgr : "", text, c ? kReset : "");
  fflush(out_);
  open_ = false;
}

void LiveView::on_event(const agent::TurnEvent& ev) {
  // The first wait names the model (later ones may carry a retry's reason instead).
  if (ev.phase == "waiting_model" && model_.empty() && !ev.detail.empty()) model_ = ev.detail;
  std::string text = status_text(ev, model_);
  const std::string& p = ev.phase;
  if (p == "waiting_model" || p == "streaming" || p == "evaluating") {
    replace_line(text);
  } else if (p == "verdict") {
    print_line(text, ev.verdict ? status_sgr(ev.verdict->status) : nullptr);
  } else if (p == "interrupted") {
    return;  // interrupted() says it, with what happens next
  } else if (p == "format_error" || p == "budget") {
    print_line(text, "\033[33m");
  } else if (p == "observation") {
    print_line(text, "\033[2m");
  } else {
    print_line(text, p == "done" ? "\033[1m" : nullptr);
  }
}

bool LiveView::read_line(const char* prompt, std::string* line) {
  fmt::print(out_, "{}", prompt);
  fflush(out_);
  line->clear();
  clearerr(in_);
  for (;;) {
    int c = fgetc(in_);
    if (c == EOF) return !line->empty() && !sandbox::interrupted();
    if (c == '\n') return true;
    *line += static_cast<char>(c);
  }
}

agent::Decision LiveView::between_turns(const std::string& current, const std::string& previous,
                                        const std::string& best, const sandbox::Verdict& last) {
  (void)best, (void)last;
  if (open_) print_line("");
  return menu(current, previous);
}

// A second Ctrl-C before the loop noticed the first: the person wants out.
bool LiveView::can_resume_after_interrupt() {
  return sandbox::interrupt_count() <= 1;
}

agent::Decision LiveView::interrupted(int turn, const std::string& phase,
                                      const std::string& current, const std::string& previous) {
  print_line(
      fmt::format("interrupted: the {} of turn {} was stopped (Ctrl-C again quits)", phase, turn),
      "\033[33m");
  return menu(current, previous);
}

// Read at the menu until a choice that ends it. A Ctrl-C there ends the read (EINTR) and
// the run with it: the loop sees the pending interrupt.
agent::Decision LiveView::menu(const std::string& current, const std::string& previous) {
  for (;;) {
    fmt::print(out_, "{}{}{}\n", color_ ? "\033[2m" : "", kMenu, color_ ? kReset : "");
    std::string line;
    if (!read_line("> ", &line)) {
      fmt::print(out_, "\n");
      return {agent::Action::quit, ""};
    }
    MenuChoice m = parse_menu(line);
    switch (m.kind) {
      case MenuChoice::next:
        return {agent::Action::next, ""};
      case MenuChoice::accept:
        return {agent::Action::accept, ""};
      case MenuChoice::retry:
        return {agent::Action::retry, ""};
      case MenuChoice::quit:
        return {agent::Action::quit, ""};
      case MenuChoice::hint:
        return {agent::Action::hint, m.text};
      case MenuChoice::ask_hint: {
        std::string text;
        if (!read_line("hint> ", &text)) return {agent::Action::quit, ""};
        text = trim(text);
        if (!text.empty()) return {agent::Action::hint, text};
        fmt::print(out_, "(no hint given)\n");
        break;
      }
      case MenuChoice::show:
        fmt::print(out_, "{}", current.empty() ? "(no kernel yet)\n" : number_lines(current));
        break;
      case MenuChoice::diff: {
        if (previous.empty()) {
          fmt::print(out_, "(no previous kernel to compare with)\n");
          break;
        }
        std::string d = unified_diff(previous, current, "previous", "current", 3, color_);
        fmt::print(out_, "{}", d.empty() ? "(the same as the previous kernel)\n" : d);
        break;
      }
      case MenuChoice::unknown:
        fmt::print(out_, "unknown choice '{}'\n", m.text);
        break;
    }
    fflush(out_);
  }
}

}  // namespace cli
