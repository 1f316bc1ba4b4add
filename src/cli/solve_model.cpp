// cli/solve_model.cpp: see solve_model.h.
#include "cli/solve_model.h"

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

}  // namespace cli
