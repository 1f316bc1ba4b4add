// agent/mode.h: what a model's reply is in a solve: a kernel (direct) or one bash command
// that explores and submits (agent). One name table: the command line's --mode, the
// trajectory's header and the prompts' choice read and write these words.
#pragma once

#include "sandbox/enum_names.h"

namespace agent {

enum class Mode { direct, agent };

}  // namespace agent

namespace sandbox {
template <>
struct EnumNames<agent::Mode> {
  static constexpr const char* what = "mode";
  static constexpr const char* names[] = {"direct", "agent"};
};
}  // namespace sandbox

namespace agent {

KF_ENUM_JSON(Mode)

}  // namespace agent
