// agent/reply.h: what the loop takes from a model's reply. Direct mode wants a kernel:
// the last fenced code block tagged cuda/cu/cpp/c++/c (or untagged). Agent mode wants
// exactly one ```bash block: one command per turn, as mini-swe-agent does. Anything else
// is a format error whose message says exactly what is expected, fed back to the model.
#pragma once

#include <string>

namespace agent {

struct ParsedReply {
  bool ok = false;
  std::string code;   // direct: the kernel source; agent: the bash command
  std::string error;  // !ok: what was wrong and what the format is
};

ParsedReply parse_direct_reply(const std::string& text);
ParsedReply parse_agent_reply(const std::string& text);

}  // namespace agent
