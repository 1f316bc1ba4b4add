// sandbox/settings.cpp: see settings.h.
#include "settings.h"

namespace sandbox {

Settings default_settings(Backend backend) {
  Settings s;
  s.backend = backend;
  if (backend == Backend::host) {
    s.iters = 10;
    s.warmup = 2;
  }
  return s;
}

std::vector<std::string> sizes_to_run(const Settings& s, bool baseline) {
  if (!s.sizes.empty()) return s.sizes;
  if (baseline) return {"full"};
  return {"small", "full"};
}

bool settings_from_json(const nlohmann::json& j, Settings* out, std::string* err) {
  if (!j.is_object()) return (*err = "the settings are not a JSON object", false);
  try {
    Backend backend = j.value("backend", Backend::cuda);
    Settings s = default_settings(backend);
    nlohmann::json merged = s;
    merged.update(j);
    // An older kforge's keys: 0 iterations and -1 warm-up meant the backend's default.
    if (merged.value("iters", 0) <= 0) merged["iters"] = s.iters;
    if (merged.value("warmup", -1) < 0) merged["warmup"] = s.warmup;
    if (merged.value("trials", 0) <= 0) merged["trials"] = s.trials;
    if (j.contains("no_time")) merged["time"] = !j.at("no_time").get<bool>();
    if (j.value("call_limit_s", 0.0) > 0) merged["limits"]["call_s"] = j.at("call_limit_s");
    *out = merged.get<Settings>();
    return true;
  } catch (const std::exception& e) {
    *err = std::string("the settings do not read: ") + e.what();
    return false;
  }
}

}  // namespace sandbox
