#include "runner/core/night.h"

namespace maxcode {

using nlohmann::json;

json to_json(const NightResult& r) {
  auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"night", r.night},         {"repository", r.repository},   {"target", r.target},
          {"file", r.file},           {"commit", r.commit},           {"share", r.share},
          {"self_ns", r.self_ns},     {"samples", r.samples},         {"original_s", r.original_s},
          {"original_rounds", r.original_rounds}, {"speedup", optional(r.speedup)},
          {"speedup_low", optional(r.speedup_low)}, {"speedup_high", optional(r.speedup_high)},
          {"status", r.status},       {"pr_number", r.pr_number},     {"pr_url", r.pr_url},
          {"pr_state", r.pr_state},   {"commits_since", r.commits_since}};
}

json to_json(const Regression& r) {
  return {{"repository", r.repository}, {"target", r.target}, {"file", r.file},
          {"previous_night", r.previous_night}, {"night", r.night}, {"previous_commit", r.previous_commit},
          {"commit", r.commit}, {"growth", r.growth}, {"z", r.z}, {"original_growth", r.original_growth},
          {"commits", r.commits}};
}

}  // namespace maxcode
