// trace/event_type.h: the types of a trajectory's events (trace.h lists each one's
// fields), as a type with one name table; on disk they are these names.
#pragma once

#include <nlohmann/json.hpp>

#include "sandbox/enum_names.h"

namespace trace {

enum class EventType {
  unknown,  // a line of a newer kforge, or not an event: readers pass over it
  header,
  prompt,
  reply,
  format_error,
  command,
  command_edited,
  command_rejected,
  observation,
  candidate,
  verdict,
  hint,
  decision,
  rewind,
  llm_error,
  llm_stopped,
  interrupted,
  budget,
  internal_error,
  setup_error,
  feedback,
  resumed,
  profile,
  summary,
};

}  // namespace trace

template <>
struct sandbox::EnumNames<trace::EventType> {
  static constexpr const char* what = "trajectory event type";
  static constexpr const char* names[] = {
      "unknown",     "header",         "prompt",           "reply",          "format_error",
      "command",     "command_edited", "command_rejected", "observation",    "candidate",
      "verdict",     "hint",           "decision",         "rewind",         "llm_error",
      "llm_stopped", "interrupted",    "budget",           "internal_error", "setup_error",
      "feedback",    "resumed",        "profile",          "summary"};
};

namespace trace {

inline const char* event_type_name(EventType t) {
  return sandbox::enum_name(t);
}

// The type of an event line; unknown when it has none kforge knows.
inline EventType event_type(const nlohmann::json& e) {
  EventType t = EventType::unknown;
  auto it = e.find("type");
  if (it != e.end() && it->is_string()) sandbox::parse_enum(it->get<std::string>(), &t);
  return t;
}

}  // namespace trace
