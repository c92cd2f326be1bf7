#include "runner/core/night.h"

#include "runner/util/format.h"

namespace maxcode {

using nlohmann::json;

json to_json(const RegressionCheck& c) {
  return {{"rounds", c.rounds}, {"before_ns", c.before_ns}, {"after_ns", c.after_ns}, {"growth", c.growth},
          {"low", c.low},       {"high", c.high},           {"confirmed", c.confirmed}, {"note", c.note}};
}

RegressionCheck regression_check_from_json(const json& j) {
  RegressionCheck c;
  c.rounds = j.at("rounds").get<int>();
  c.before_ns = j.at("before_ns").get<std::vector<double>>();
  c.after_ns = j.at("after_ns").get<std::vector<double>>();
  c.growth = j.at("growth").get<double>();
  c.low = j.at("low").get<double>();
  c.high = j.at("high").get<double>();
  c.confirmed = j.at("confirmed").get<bool>();
  c.note = j.at("note").get<std::string>();
  return c;
}

json to_json(const NightResult& r) {
  auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"night", r.night},         {"repository", r.repository},   {"target", r.target},
          {"file", r.file},           {"commit", r.commit},           {"share", r.share},
          {"self_ns", r.self_ns},     {"samples", r.samples},         {"original_s", r.original_s},
          {"original_rounds", r.original_rounds}, {"speedup", optional(r.speedup)},
          {"speedup_low", optional(r.speedup_low)}, {"speedup_high", optional(r.speedup_high)},
          {"status", r.status},       {"pr_number", r.pr_number},     {"pr_url", r.pr_url},
          {"pr_state", r.pr_state},   {"commits_since", r.commits_since},
          {"check", r.check ? to_json(*r.check) : json(nullptr)}};
}

json to_json(const Regression& r) {
  return {{"repository", r.repository}, {"target", r.target}, {"file", r.file},
          {"previous_night", r.previous_night}, {"night", r.night}, {"previous_commit", r.previous_commit},
          {"commit", r.commit}, {"growth", r.growth}, {"z", r.z}, {"original_growth", r.original_growth},
          {"commits", r.commits}, {"check", r.check ? to_json(*r.check) : json(nullptr)}};
}

std::string regression_evidence(const Regression& r) {
  if (!r.check || r.check->rounds == 0)
    return format_numbers("%.1f standard errors of the profile's sampling", r.z);
  int slower = 0;
  for (std::size_t i = 0; i < r.check->after_ns.size() && i < r.check->before_ns.size(); ++i)
    slower += r.check->after_ns[i] > r.check->before_ns[i];
  return format_numbers("measured side by side the same night: %.2fx [%.2f, %.2f], slower in %d of %d rounds",
                        r.check->growth, r.check->low, r.check->high, slower, r.check->rounds);
}

}  // namespace maxcode
