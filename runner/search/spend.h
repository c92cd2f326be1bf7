// What a search has spent: LLM tokens and dollars, calls (made, failed, refused by the
// budget), unusable replies, GPU/CPU timing seconds. Shared by the policy, the critic
// and the reranker, which call models concurrently.
//
// Token and dollar limits are enforced before each call, not only between search steps:
// a batch of k concurrent calls that starts just under a limit would otherwise pass it by
// k calls (issue: 1,500 tokens allowed, 2,318 spent). A call is admitted while what is
// spent, plus one call as large as the largest so far for each call in flight and for
// itself, stays within the limits, so a run stops within one call of either.
//
// The search's wall budget is a deadline here too: no call is admitted past it, so the
// critiques and proposals of a step that began just before it are not made after it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/llm/provider.h"

namespace maxcode {

struct SpendLimits {
  long max_tokens = 0;     // 0: no limit
  double max_dollars = 0;  // 0: no limit
};

class Spend {
 public:
  explicit Spend(SpendLimits limits = {}) : limits_(limits) {}

  // One model call through the budget. Returns nullopt without calling when the call
  // would pass a limit (then `exhausted()` says which). An LlmError from the provider is
  // counted as a failed call and rethrown.
  std::optional<llm::Reply> complete(llm::Provider& provider, const llm::Request& request);

  // No call is admitted from `deadline` on ("time budget reached: the search's 20 s are
  // up"); the search sets it when it starts, `budget_s` after.
  void set_deadline(std::chrono::steady_clock::time_point deadline, double budget_s);

  void add_unusable_reply() { std::lock_guard<std::mutex> l(mutex_); ++unusable_; }
  void add_timing_seconds(double s) { std::lock_guard<std::mutex> l(mutex_); timing_s_ += s; }

  // Which limit stopped a call ("token budget reached: 1,480 of 1,500 spent, a call takes
  // up to 412"), or empty while calls are still admitted.
  std::string exhausted() const { std::lock_guard<std::mutex> l(mutex_); return exhausted_; }
  long tokens() const { std::lock_guard<std::mutex> l(mutex_); return tokens_; }
  double dollars() const { std::lock_guard<std::mutex> l(mutex_); return dollars_; }
  double timing_seconds() const { std::lock_guard<std::mutex> l(mutex_); return timing_s_; }
  long calls() const { std::lock_guard<std::mutex> l(mutex_); return calls_; }
  nlohmann::json to_json() const;
  void restore(const nlohmann::json& j);

 private:
  bool admit();
  std::string over_limit(long in_flight) const;  // with mutex_ held
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // a call came back
  SpendLimits limits_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  double budget_s_ = 0;
  long tokens_ = 0;
  double dollars_ = 0;
  long calls_ = 0, failed_calls_ = 0, refused_calls_ = 0, unusable_ = 0;
  long in_flight_ = 0;
  long largest_tokens_ = 0;   // of one call so far
  double largest_dollars_ = 0;
  double timing_s_ = 0;
  std::string exhausted_;
};

}  // namespace maxcode
