// cli/solve_model.cpp: see solve_model.h.
#include "cli/solve_model.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/loop.h"
#include "cli/cmd_solve.h"
#include "cli/commands.h"
#include "llm/config.h"
#if __has_include("agent/builtin.h")
#include "agent/builtin.h"
#define KF_HAVE_BUILTIN 1
#endif

namespace cli {

namespace {

void replace_all(std::string* s, const std::string& from, const std::string& to) {
  for (size_t at = s->find(from); at != std::string::npos; at = s->find(from, at + to.size()))
    s->replace(at, from.size(), to);
}

class FlagAdvice : public agent::Model {
 public:
  FlagAdvice(std::unique_ptr<agent::Model> m, GivenFlags f) : m_(std::move(m)), flags_(f) {}
  std::string name() const override { return m_->name(); }
  const llm::Price* price() const override { return m_->price(); }
  bool next(const llm::Request& req, const std::vector<sandbox::Verdict>& verdicts, llm::Reply* out,
            llm::Error* err) override {
    llm::Request r = req;
    if (req.on_retry)
      r.on_retry = [&](int attempt, const llm::Error& why) {
        llm::Error e = why;
        e.message = advice_with_flags(e.message, flags_);
        req.on_retry(attempt, e);
      };
    bool ok = m_->next(r, verdicts, out, err);
    if (!ok) err->message = advice_with_flags(err->message, flags_);
    return ok;
  }

 private:
  std::unique_ptr<agent::Model> m_;
  GivenFlags flags_;
};

}  // namespace

std::string advice_with_flags(const std::string& message, const GivenFlags& flags) {
  std::string s = message;
  if (flags.idle_timeout) replace_all(&s, "timeouts.idle_s", "--idle-timeout");
  return s;
}

std::unique_ptr<agent::Model> name_given_flags(std::unique_ptr<agent::Model> m,
                                               const GivenFlags& flags) {
  return std::make_unique<FlagAdvice>(std::move(m), flags);
}

// The model named by --model, the config file, or builtin. Null with *err, *code.
// *unsupported: the model is the builtin, which cannot write this problem.
std::unique_ptr<agent::Model> make_model(const SolveArgs& a, const agent::SolveConfig& cfg,
                                         bool* used_default, bool* unsupported, std::string* err,
                                         int* code) {
  llm::LlmConfig file;
  bool explicit_cfg = !a.config_file.empty();
  if (!llm::load_llm_config(explicit_cfg ? a.config_file : llm::default_config_path(), explicit_cfg,
                            &file, err)) {
    *code = kBadInput;
    return nullptr;
  }
  std::string spec = !a.model.empty() ? a.model : file.model;
  *used_default = spec.empty();
  if ((spec.empty() || spec == "builtin") && cfg.foreign) {
    *err =
        "the builtin template search writes kforge's own problems only: give a model for a "
        "PKB problem (--model provider:name, or replay:FILE)";
    *code = kBadInput;
    return nullptr;
  }
  if (spec.empty() || spec == "builtin") {
#ifdef KF_HAVE_BUILTIN
    if (!agent::builtin_supports(cfg.eval, err)) {
      *code = kBadInput;
      *unsupported = true;
      return nullptr;
    }
    auto m = agent::make_builtin_model(cfg.eval, err);
    if (!m) *code = kInternal;
    return m;
#else
    *err =
        "no model configured and the builtin template search is not in this build: pass --model "
        "provider:name";
    *code = kBadInput;
    return nullptr;
#endif
  }
  llm::ProviderConfig pc;
  if (!llm::resolve_provider_config(file, a.model, a.base_url, &pc, err)) {
    *code = kBadInput;
    return nullptr;
  }
  if (a.idle_timeout_s > 0) pc.timeouts.idle_s = a.idle_timeout_s;
  if (!a.api_key_env.empty()) pc.api_key_env = a.api_key_env;
  auto p = llm::make_provider(pc, err);
  if (!p) {
    *code = kBadInput;
    return nullptr;
  }
  llm::Error e;
  if (!p->ready(&e)) {
    *err = std::string(llm::error_kind_name(e.kind)) + ": " + e.message;
    *code = e.kind == llm::ErrorKind::missing_key ? kBadInput
                                                  : kInternal;  // the user's setup, not kforge
    return nullptr;
  }
  return name_given_flags(agent::wrap_provider(std::move(p)), {a.idle_timeout_s > 0});
}

// The model solve talks to, or null with *code, *kind (the result's error) and *err. A
// sweep's sample the builtin cannot write leaves its outcome in its verdict.json.
std::unique_ptr<agent::Model> solve_model(const SolveArgs& a, const agent::SolveConfig& cfg,
                                          int* code, std::string* kind, std::string* err) {
  bool used_default = false, unsupported = false;
  auto model = make_model(a, cfg, &used_default, &unsupported, err, code);
  if (unsupported && !a.out.empty()) {  // a sweep's sample: its outcome, not a failure
    std::error_code ec;
    std::filesystem::create_directories(a.out, ec);
    nlohmann::json solve_j = {
        {"exit_code", *code}, {"turns", 0}, {"error", "builtin_unsupported"}, {"message", *err}};
    std::ofstream(a.out + "/verdict.json") << nlohmann::json{{"solve", solve_j}}.dump(2) << "\n";
  }
  if (!model) {
    *kind = unsupported ? "builtin_unsupported" : *code == kBadInput ? "bad_input" : "provider";
    return nullptr;
  }
  if (used_default)
    fmt::print(
        stderr,
        "kforge solve: no model configured (--model or {}): using builtin, the template search\n",
        llm::default_config_path());
  return model;
}

}  // namespace cli
