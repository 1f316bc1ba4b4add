// llm/replay.h: the `replay` provider: `--model replay:FILE` answers with the replies
// recorded in a trajectory (runs/<problem>/*.jsonl), in order, for tests and demos.
// It reads the JSONL itself (reply events' "text") so that src/llm does not depend on
// src/trace. Its row in the provider table (provider.cpp) builds it.
#pragma once

#include <memory>
#include <string>

#include "llm/provider.h"

namespace llm {

// A provider answering with path's recorded replies. Null with *err when the file cannot
// be read or holds no reply.
std::unique_ptr<Provider> make_replay_provider(const std::string& path, std::string* err);

}  // namespace llm
