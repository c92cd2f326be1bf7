// The `tune` policy: a search over declared knob values, no code generation.
#include <algorithm>
#include <random>
#include <set>

#include "runner/search/policy.h"

namespace maxcode {

namespace {

using Setting = std::vector<std::size_t>;  // value index per knob

class TunePolicy : public Policy {
 public:
  TunePolicy(std::vector<Knob> knobs, int budget, std::uint64_t seed)
      : knobs_(std::move(knobs)), budget_(budget), rng_(seed) {
    if (knobs_.empty())
      throw PolicyError("the tune policy has no knobs: declare them in search.knobs or with "
                        "'// maxcode: tune NAME v1 v2 ...' beside a #define or constexpr in the "
                        "target's file");
    original_.resize(knobs_.size());
    for (std::size_t k = 0; k < knobs_.size(); ++k) {
      auto& values = knobs_[k].values;
      auto it = std::find(values.begin(), values.end(), knobs_[k].original_value);
      if (it == values.end()) {  // the current value is a point of the space too
        values.insert(values.begin(), knobs_[k].original_value);
        it = values.begin();
      }
      original_[k] = static_cast<std::size_t>(it - values.begin());
    }
    seen_.insert(original_);
    space_ = 1;
    for (const Knob& knob : knobs_) space_ = std::min<double>(space_ * knob.values.size(), 1e12);
  }

  std::string name() const override { return "tune"; }

  std::vector<Candidate> propose(const SearchState& state, int count) override {
    std::vector<Candidate> out;
    const bool exhaustive = space_ - 1 <= budget_;
    while (static_cast<int>(out.size()) < count) {
      std::optional<Setting> next = exhaustive ? next_in_order() : next_sampled(state);
      if (!next) break;
      out.push_back(to_candidate(*next, exhaustive ? "exhaustive" : note_));
    }
    return out;
  }

 private:
  std::optional<Setting> next_in_order() {
    while (cursor_ < space_) {
      Setting s(knobs_.size());
      double rest = cursor_++;
      for (std::size_t k = knobs_.size(); k-- > 0;) {
        const double n = static_cast<double>(knobs_[k].values.size());
        s[k] = static_cast<std::size_t>(std::fmod(rest, n));
        rest = std::floor(rest / n);
      }
      if (seen_.insert(s).second) return s;
    }
    return std::nullopt;
  }

  // Random exploration for the first half of the budget, then neighbours of the best
  // setting (one knob one step away); random again when the neighbourhood is used up.
  std::optional<Setting> next_sampled(const SearchState& state) {
    if (proposed_ >= budget_ / 2) {
      Setting centre = original_;
      if (const TrajectoryEntry* best = state.best_entry()) centre = setting_of(best->candidate);
      for (std::size_t k = 0; k < knobs_.size(); ++k)
        for (int step : {-1, 1}) {
          Setting s = centre;
          const long v = static_cast<long>(s[k]) + step;
          if (v < 0 || v >= static_cast<long>(knobs_[k].values.size())) continue;
          s[k] = static_cast<std::size_t>(v);
          if (seen_.insert(s).second) {
            note_ = "neighbour of the best setting";
            return s;
          }
        }
    }
    for (int attempt = 0; attempt < 1000; ++attempt) {
      Setting s(knobs_.size());
      for (std::size_t k = 0; k < knobs_.size(); ++k)
        s[k] = std::uniform_int_distribution<std::size_t>(0, knobs_[k].values.size() - 1)(rng_);
      if (seen_.insert(s).second) {
        note_ = "random sample";
        return s;
      }
    }
    return std::nullopt;
  }

  Setting setting_of(const Candidate& c) const {
    Setting s = original_;
    for (std::size_t k = 0; k < knobs_.size(); ++k) {
      auto it = c.knobs.find(knobs_[k].name);
      if (it == c.knobs.end()) continue;
      auto& values = knobs_[k].values;
      s[k] = static_cast<std::size_t>(std::find(values.begin(), values.end(), it->second) - values.begin());
    }
    return s;
  }

  Candidate to_candidate(const Setting& s, const std::string& note) {
    ++proposed_;
    Candidate c;
    c.origin = "tune";
    c.note = note;
    for (std::size_t k = 0; k < knobs_.size(); ++k) {
      c.knobs[knobs_[k].name] = knobs_[k].values[s[k]];
      c.id += (c.id.empty() ? "" : ",") + knobs_[k].name + "=" + knobs_[k].values[s[k]];
    }
    return c;
  }

  std::vector<Knob> knobs_;
  int budget_;
  std::mt19937_64 rng_;
  Setting original_;
  std::set<Setting> seen_;
  double space_ = 1;
  double cursor_ = 0;
  int proposed_ = 0;
  std::string note_;
};

}  // namespace

std::unique_ptr<Policy> make_tune_policy(std::vector<Knob> knobs, int budget, std::uint64_t seed) {
  return std::make_unique<TunePolicy>(std::move(knobs), budget, seed);
}

}  // namespace maxcode
