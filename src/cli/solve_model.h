// cli/solve_model.h: the model `kforge solve` talks to, as the person set it up. A
// provider's advice names its configuration keys ("raise timeouts.idle_s"); where the
// person set that value with a flag instead (--idle-timeout), the advice names the flag,
// in the live view, the result line and the trajectory alike.
#pragma once

#include <memory>
#include <string>

#include "agent/model.h"

namespace agent {
struct SolveConfig;  // agent/loop.h
}

namespace cli {

struct SolveArgs;  // cli/cmd_solve.h

// The model named by --model, the config file, or builtin. Null with *err and *code (an
// ExitCode, cli/commands.h); *unsupported: the model is the builtin, which cannot write
// this problem.
std::unique_ptr<agent::Model> make_model(const SolveArgs& a, const agent::SolveConfig& cfg,
                                         bool* used_default, bool* unsupported, std::string* err,
                                         int* code);

// make_model for `kforge solve`: null with *code, *kind (the result line's error:
// builtin_unsupported, bad_input or provider) and *err; a sweep's sample that the builtin
// cannot write leaves that outcome in its verdict.json. Says so when the builtin stands in
// for a model nobody configured.
std::unique_ptr<agent::Model> solve_model(const SolveArgs& a, const agent::SolveConfig& cfg,
                                          int* code, std::string* kind, std::string* err);

// The flags the person gave that stand for a provider's configuration keys.
struct GivenFlags {
  bool idle_timeout = false;  // --idle-timeout
};

// `message` with each configuration key the person set by a flag named as that flag.
std::string advice_with_flags(const std::string& message, const GivenFlags& flags);

// `m`, whose errors and retry notes name the flags given (advice_with_flags).
std::unique_ptr<agent::Model> name_given_flags(std::unique_ptr<agent::Model> m,
                                               const GivenFlags& flags);

}  // namespace cli
