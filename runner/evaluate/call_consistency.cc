#include "runner/evaluate/call_consistency.h"

#include "runner/util/format.h"

#include <algorithm>
#include <cstdio>

namespace maxcode {
namespace {

// A trivial call does at most this share of a real call's work.
constexpr double kTrivial = 1.0 / 20;
// A costly call of the candidate does at least this share of the original's per-call
// work: the candidate is not uniformly faster, it did the work on that call.
constexpr double kCostly = 1.0 / 4;
// Fewer calls than this say nothing about a pattern.
constexpr std::size_t kMinCalls = 3;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string check_call_times(const std::vector<double>& original_s, const std::vector<double>& candidate_s) {
  if (original_s.size() < kMinCalls || candidate_s.size() < kMinCalls) return "";
  const double original_median = median(original_s);
  const double original_max = *std::max_element(original_s.begin(), original_s.end());
  std::size_t original_trivial = 0;
  for (double t : original_s) original_trivial += t < original_max * kTrivial;
  // The original's own calls vary (it has fast paths of its own): no rule to apply.
  if (original_trivial * 10 > original_s.size()) return "";

  const double candidate_max = *std::max_element(candidate_s.begin(), candidate_s.end());
  std::vector<double> costly, trivial;
  std::vector<std::size_t> costly_calls;
  for (std::size_t i = 0; i < candidate_s.size(); ++i) {
    const double t = candidate_s[i];
    if (t >= original_median * kCostly) {
      costly.push_back(t);
      costly_calls.push_back(i);
    } else if (t <= original_median * kTrivial && t <= candidate_max * kTrivial) {
      trivial.push_back(t);
    }
  }
  if (costly.empty() || trivial.empty()) return "";
  // Most calls trivial: the work happens on a few of them only.
  if (trivial.size() * 2 < candidate_s.size()) return "";
  const std::string alike = "the original's calls are alike (median " + format_duration(original_median) + ")";
  if (costly.size() == 1 && costly_calls.front() == 0) {
    std::vector<double> rest(candidate_s.begin() + 1, candidate_s.end());
    return "per-call times: first " + format_duration(candidate_s.front()) + ", then median " +
           format_duration(median(rest)) + "; " + alike + ": the candidate caches its result";
  }
  return "per-call times: " + std::to_string(costly.size()) + " of " + std::to_string(candidate_s.size()) +
         " calls take median " + format_duration(median(costly)) + ", " + std::to_string(trivial.size()) +
         " take median " + format_duration(median(trivial)) + "; " + alike +
         ": the candidate skips the work on some calls";
}

}  // namespace maxcode
