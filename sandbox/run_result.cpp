// sandbox/run_result.cpp: see run_result.h.
#include "run_result.h"

#include <chrono>

#include "text.h"

namespace sandbox {

long long wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

RankStatus read_rank_status(const std::string& dir, int rank) {
  RankStatus s;
  s.rank = rank;
  std::string text = read_text(dir + "/status/rank" + std::to_string(rank));
  if (text.empty()) return s;
  // A file being written is replaced atomically; anything else is not ours to parse.
  RankStatusLine line;
  std::string err;
  if (!parse_rank_status(text, &line, &err)) return s;
  static_cast<RankStatusLine&>(s) = line;
  s.seconds = s.since_ms > 0 ? (wall_clock_ms() - s.since_ms) / 1000.0 : 0;
  s.present = true;
  return s;
}

}  // namespace sandbox
