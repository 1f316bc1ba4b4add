// agent/model.h: what the loop asks for the next reply. A language model (any
// llm::Provider, replay included) only sees the conversation; the builtin template
// search also sees the structured verdicts of the candidates so far, which is why the
// loop talks to this interface rather than to llm::Provider directly.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "llm/provider.h"
#include "sandbox/verdict.h"

namespace agent {

class Model {
 public:
  virtual ~Model() = default;
  virtual std::string name() const = 0;  // "openai:gpt-5", "builtin", "replay:FILE"
  // The reply to req.messages (the last is the prompt to answer). `verdicts` are the
  // verdicts of every candidate evaluated so far in this run, oldest first.
  virtual bool next(const llm::Request& req, const std::vector<sandbox::Verdict>& verdicts,
                    llm::Reply* out, llm::Error* err) = 0;
  // Its price, for a cost budget that caps replies; null when unknown or free.
  virtual const llm::Price* price() const { return nullptr; }
};

// A Model over a provider: verdicts are ignored, the conversation is the whole input.
std::unique_ptr<Model> wrap_provider(std::unique_ptr<llm::Provider> p);

}  // namespace agent
