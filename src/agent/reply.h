// agent/reply.h: what the loop takes from a model's reply. Direct mode wants a kernel:
// the last fenced code block tagged cuda/cu/cpp/c++/c (or untagged). Agent mode wants
// exactly one ```bash block: one command per turn, as mini-swe-agent does. Anything else
// is a format error whose message says exactly what is expected, fed back to the model.
#pragma once

#include <string>
#include <vector>

#include "sandbox/job_enums.h"

namespace agent {

struct ParsedReply {
  bool ok = false;
  std::string code;   // direct: the kernel source; agent: the bash command
  std::string error;  // !ok: what was wrong and what the format is
};

struct Block {
  std::string tag;  // lower-cased info string's first word
  std::string body;
};

// The closed fenced blocks of a reply, in order: a line starting with ``` (after optional
// spaces) opens one, the next line that is only ``` (and spaces) closes it. *unclosed:
// the reply ends inside a block (a reply cut at max_tokens), which is not returned.
std::vector<Block> fenced_blocks(const std::string& text, bool* unclosed);

// backend: what the format reminder of an error shows (a cuda block with <kf/kf.cuh>, or
// on the host backend a cpp block with <kf/kf.h>; kernel.cu or kernel.cpp).
ParsedReply parse_direct_reply(const std::string& text, sandbox::Backend backend);
ParsedReply parse_agent_reply(const std::string& text, sandbox::Backend backend);

}  // namespace agent
