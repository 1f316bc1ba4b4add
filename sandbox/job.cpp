// sandbox/job.cpp: JSON conversion of the kforge <-> kforge-rank contract, and the
// small file helpers both sides use.
#include "job.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace sandbox {

using nlohmann::json;

namespace {
// Reads j[key] into v when present; leaves the default otherwise.
template <class T>
void opt(const json& j, const char* key, T& v) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) it->get_to(v);
}
}  // namespace

bool parse_dtype(const std::string& s, kf::DType* out) {
  static const std::pair<const char*, kf::DType> names[] = {
      {"f32", kf::DType::f32},       {"fp32", kf::DType::f32},      {"float32", kf::DType::f32},
      {"f16", kf::DType::f16},       {"fp16", kf::DType::f16},      {"float16", kf::DType::f16},
      {"bf16", kf::DType::bf16},     {"bfloat16", kf::DType::bf16}, {"f64", kf::DType::f64},
      {"fp64", kf::DType::f64},      {"float64", kf::DType::f64},   {"i32", kf::DType::i32},
      {"int32", kf::DType::i32},     {"i64", kf::DType::i64},       {"int64", kf::DType::i64},
      {"u8", kf::DType::u8},         {"uint8", kf::DType::u8},      {"e4m3", kf::DType::e4m3},
      {"fp8_e4m3", kf::DType::e4m3}, {"e5m2", kf::DType::e5m2},     {"fp8_e5m2", kf::DType::e5m2},
  };
  for (auto& [n, t] : names)
    if (s == n) {
      *out = t;
      return true;
    }
  return false;
}

const char* dtype_name(kf::DType t) {
  switch (t) {
    case kf::DType::f32:
      return "fp32";
    case kf::DType::f16:
      return "fp16";
    case kf::DType::bf16:
      return "bf16";
    case kf::DType::f64:
      return "fp64";
    case kf::DType::i32:
      return "int32";
    case kf::DType::i64:
      return "int64";
    case kf::DType::u8:
      return "uint8";
    case kf::DType::e4m3:
      return "fp8_e4m3";
    case kf::DType::e5m2:
      return "fp8_e5m2";
  }
  return "?";
}

void to_json(json& j, const InitSpec& v) {
  j = json{{"dist", v.dist}, {"a", v.a}, {"b", v.b}};
}
void from_json(const json& j, InitSpec& v) {
  opt(j, "dist", v.dist);
  opt(j, "a", v.a);
  opt(j, "b", v.b);
}

void to_json(json& j, const JobTensor& v) {
  j = json{{"name", v.name},     {"dtype", dtype_name(v.dtype)},
           {"output", v.output}, {"shape_by_rank", v.shape_by_rank},
           {"init", v.init},     {"atol", v.atol},
           {"rtol", v.rtol}};
}
void from_json(const json& j, JobTensor& v) {
  opt(j, "name", v.name);
  std::string d = "fp32";
  opt(j, "dtype", d);
  if (!parse_dtype(d, &v.dtype)) throw std::runtime_error("job.json: unknown dtype " + d);
  opt(j, "output", v.output);
  opt(j, "shape_by_rank", v.shape_by_rank);
  opt(j, "init", v.init);
  opt(j, "atol", v.atol);
  opt(j, "rtol", v.rtol);
}

void to_json(json& j, const Limits& v) {
  j = json{{"bootstrap_s", v.bootstrap_s}, {"load_s", v.load_s}, {"setup_s", v.setup_s},
           {"call_s", v.call_s},           {"time_s", v.time_s}, {"total_s", v.total_s}};
}
void from_json(const json& j, Limits& v) {
  opt(j, "bootstrap_s", v.bootstrap_s);
  opt(j, "load_s", v.load_s);
  opt(j, "setup_s", v.setup_s);
  opt(j, "call_s", v.call_s);
  opt(j, "time_s", v.time_s);
  opt(j, "total_s", v.total_s);
}

void to_json(json& j, const Job& v) {
  j = json{{"problem", v.problem},
           {"backend", v.backend},
           {"world", v.world},
           {"dir", v.dir},
           {"candidate_lib", v.candidate_lib},
           {"baseline_lib", v.baseline_lib},
           {"candidate_is_baseline", v.candidate_is_baseline},
           {"reference", v.reference},
           {"params", v.params},
           {"str_params", v.str_params},
           {"tensors", v.tensors},
           {"seed", v.seed},
           {"fixed_inputs", v.fixed_inputs},
           {"trials", v.trials},
           {"calls", v.calls},
           {"stagger_ms", v.stagger_ms},
           {"race_calls", v.race_calls},
           {"time", v.time},
           {"timing", v.timing},
           {"warmup", v.warmup},
           {"iters", v.iters},
           {"verify_every", v.verify_every},
           {"l2_flush_bytes", v.l2_flush_bytes},
           {"workspace_bytes", v.workspace_bytes},
           {"shm_prefix", v.shm_prefix},
           {"limits", v.limits}};
}
void from_json(const json& j, Job& v) {
  opt(j, "problem", v.problem);
  opt(j, "backend", v.backend);
  opt(j, "world", v.world);
  opt(j, "dir", v.dir);
  opt(j, "candidate_lib", v.candidate_lib);
  opt(j, "baseline_lib", v.baseline_lib);
  opt(j, "candidate_is_baseline", v.candidate_is_baseline);
  opt(j, "reference", v.reference);
  opt(j, "params", v.params);
  opt(j, "str_params", v.str_params);
  opt(j, "tensors", v.tensors);
  opt(j, "seed", v.seed);
  opt(j, "fixed_inputs", v.fixed_inputs);
  opt(j, "trials", v.trials);
  opt(j, "calls", v.calls);
  opt(j, "stagger_ms", v.stagger_ms);
  opt(j, "race_calls", v.race_calls);
  opt(j, "time", v.time);
  opt(j, "timing", v.timing);
  opt(j, "warmup", v.warmup);
  opt(j, "iters", v.iters);
  opt(j, "verify_every", v.verify_every);
  opt(j, "l2_flush_bytes", v.l2_flush_bytes);
  opt(j, "workspace_bytes", v.workspace_bytes);
  opt(j, "shm_prefix", v.shm_prefix);
  opt(j, "limits", v.limits);
}

// JSON has no NaN or infinity, and a poisoned output reads as NaN: such values travel
// as the strings "nan", "inf" and "-inf".
static json number_json(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}
static double json_number(const json& j) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "inf") return HUGE_VAL;
    if (s == "-inf") return -HUGE_VAL;
    return NAN;
  }
  return j.is_number() ? j.get<double>() : NAN;
}

void to_json(json& j, const Failure::Bad& v) {
  j = json{{"index", v.index}, {"got", number_json(v.got)}, {"want", number_json(v.want)}};
}
void from_json(const json& j, Failure::Bad& v) {
  opt(j, "index", v.index);
  if (j.contains("got")) v.got = json_number(j["got"]);
  if (j.contains("want")) v.want = json_number(j["want"]);
}

void to_json(json& j, const Failure& v) {
  j = json{{"kind", v.kind},
           {"who", v.who},
           {"message", v.message},
           {"phase", v.phase},
           {"tensor", v.tensor},
           {"trial", v.trial},
           {"call", v.call},
           {"bad_count", v.bad_count},
           {"total", v.total},
           {"max_abs", number_json(v.max_abs)},
           {"max_rel", number_json(v.max_rel)},
           {"input_modified", v.input_modified},
           {"first_bad", v.first_bad}};
}
void from_json(const json& j, Failure& v) {
  opt(j, "kind", v.kind);
  opt(j, "who", v.who);
  opt(j, "message", v.message);
  opt(j, "phase", v.phase);
  opt(j, "tensor", v.tensor);
  opt(j, "trial", v.trial);
  opt(j, "call", v.call);
  opt(j, "bad_count", v.bad_count);
  opt(j, "total", v.total);
  if (j.contains("max_abs")) v.max_abs = json_number(j["max_abs"]);
  if (j.contains("max_rel")) v.max_rel = json_number(j["max_rel"]);
  opt(j, "input_modified", v.input_modified);
  opt(j, "first_bad", v.first_bad);
}

void to_json(json& j, const TimeStats& v) {
  j = json{{"n", v.n},
           {"median_ms", v.median_ms},
           {"p10_ms", v.p10_ms},
           {"p90_ms", v.p90_ms},
           {"min_ms", v.min_ms},
           {"max_ms", v.max_ms},
           {"off_stream", v.off_stream},
           {"unconfirmed", v.unconfirmed}};
}
void from_json(const json& j, TimeStats& v) {
  opt(j, "n", v.n);
  opt(j, "median_ms", v.median_ms);
  opt(j, "p10_ms", v.p10_ms);
  opt(j, "p90_ms", v.p90_ms);
  opt(j, "min_ms", v.min_ms);
  opt(j, "max_ms", v.max_ms);
  opt(j, "off_stream", v.off_stream);
  opt(j, "unconfirmed", v.unconfirmed);
}

void to_json(json& j, const RankReport& v) {
  j = json{{"rank", v.rank},
           {"pid", v.pid},
           {"device", v.device},
           {"emulated", v.emulated},
           {"baseline_ran", v.baseline_ran},
           {"reference_used", v.reference_used},
           {"failures", v.failures},
           {"notes", v.notes}};
}
void from_json(const json& j, RankReport& v) {
  opt(j, "rank", v.rank);
  opt(j, "pid", v.pid);
  opt(j, "device", v.device);
  opt(j, "emulated", v.emulated);
  opt(j, "baseline_ran", v.baseline_ran);
  opt(j, "reference_used", v.reference_used);
  opt(j, "failures", v.failures);
  opt(j, "notes", v.notes);
}

void to_json(json& j, const RunReport& v) {
  j = json{{"world", v.world},
           {"emulated", v.emulated},
           {"backend", v.backend},
           {"device_name", v.device_name},
           {"devices", v.devices},
           {"timed", v.timed},
           {"baseline_timed", v.baseline_timed},
           {"candidate", v.candidate},
           {"baseline", v.baseline},
           {"timed_calls_verified", v.timed_calls_verified},
           {"off_stream_slack_ms", v.off_stream_slack_ms},
           {"timer_margin_ms", v.timer_margin_ms},
           {"timer_overhead_ms", v.timer_overhead_ms},
           {"phase_s", v.phase_s},
           {"notes", v.notes}};
}
void from_json(const json& j, RunReport& v) {
  opt(j, "world", v.world);
  opt(j, "emulated", v.emulated);
  opt(j, "backend", v.backend);
  opt(j, "device_name", v.device_name);
  opt(j, "devices", v.devices);
  opt(j, "timed", v.timed);
  opt(j, "baseline_timed", v.baseline_timed);
  opt(j, "candidate", v.candidate);
  opt(j, "baseline", v.baseline);
  opt(j, "timed_calls_verified", v.timed_calls_verified);
  opt(j, "off_stream_slack_ms", v.off_stream_slack_ms);
  opt(j, "timer_margin_ms", v.timer_margin_ms);
  opt(j, "timer_overhead_ms", v.timer_overhead_ms);
  opt(j, "phase_s", v.phase_s);
  opt(j, "notes", v.notes);
}

bool read_json_file(const std::string& path, json* out, std::string* err) {
  std::ifstream in(path);
  if (!in) {
    *err = path + ": cannot open";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    *out = json::parse(ss.str());
  } catch (const json::parse_error& e) {
    *err = path + ": not valid JSON: " + e.what();
    return false;
  }
  return true;
}

bool write_json_file(const std::string& path, const json& j, std::string* err) {
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    if (!out) {
      *err = tmp + ": cannot create";
      return false;
    }
    out << j.dump(2) << "\n";
    if (!out.flush()) {
      *err = tmp + ": write failed";
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *err = path + ": rename failed";
    return false;
  }
  return true;
}

}  // namespace sandbox
