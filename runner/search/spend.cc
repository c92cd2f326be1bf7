#include "runner/search/spend.h"

#include <algorithm>

#include "runner/util/format.h"

namespace maxcode {

// Why another call would pass a limit with `in_flight` calls still out, or empty.
std::string Spend::over_limit(long in_flight) const {
  const long ahead = in_flight + 1;
  if (limits_.max_tokens > 0 &&
      (tokens_ >= limits_.max_tokens || tokens_ + ahead * largest_tokens_ > limits_.max_tokens))
    return "token budget reached: " + std::to_string(tokens_) + " of " + std::to_string(limits_.max_tokens) +
           " spent, a call takes up to " + std::to_string(largest_tokens_);
  if (limits_.max_dollars > 0 &&
      (dollars_ >= limits_.max_dollars ||
       dollars_ + static_cast<double>(ahead) * largest_dollars_ > limits_.max_dollars))
    return "dollar budget reached: $" + fixed(dollars_, 4) + " of $" + fixed(limits_.max_dollars, 4) +
           " spent, a call costs up to $" + fixed(largest_dollars_, 4);
  return "";
}

void Spend::set_deadline(std::chrono::steady_clock::time_point deadline, double budget_s) {
  std::lock_guard<std::mutex> lock(mutex_);
  deadline_ = deadline;
  budget_s_ = budget_s;
}

bool Spend::admit() {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool limited = limits_.max_tokens > 0 || limits_.max_dollars > 0;
  // Before the first answer the size of a call is unknown, and where another call
  // would fit only once those in flight are back, it waits for them rather than
  // guessing: under a limit, concurrency costs nothing but waiting.
  changed_.wait(lock, [&] {
    if (!limited || in_flight_ == 0) return true;
    if (calls_ == 0) return false;
    return over_limit(in_flight_).empty();
  });
  if (exhausted_.empty() && limited) exhausted_ = over_limit(0);
  if (exhausted_.empty() && deadline_ && std::chrono::steady_clock::now() >= *deadline_)
    exhausted_ = "time budget reached: the search's " + format_duration(budget_s_) + " are up";
  if (!exhausted_.empty()) {
    ++refused_calls_;
    return false;
  }
  ++in_flight_;
  return true;
}

std::optional<llm::Reply> Spend::complete(llm::Provider& provider, const llm::Request& request) {
  if (!admit()) return std::nullopt;
  try {
    llm::Reply reply = provider.complete(request);
    std::lock_guard<std::mutex> lock(mutex_);
    --in_flight_;
    const long t = reply.usage.input_tokens + reply.usage.output_tokens;
    tokens_ += t;
    dollars_ += reply.usage.cost_usd;
    largest_tokens_ = std::max(largest_tokens_, t);
    largest_dollars_ = std::max(largest_dollars_, reply.usage.cost_usd);
    ++calls_;
    changed_.notify_all();
    return reply;
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    --in_flight_;
    ++calls_;
    ++failed_calls_;
    changed_.notify_all();
    throw;
  }
}

nlohmann::json Spend::to_json() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {{"tokens", tokens_},
          {"dollars", dollars_},
          {"llm_calls", calls_},
          {"failed_calls", failed_calls_},
          {"refused_calls", refused_calls_},
          {"unusable_replies", unusable_},
          {"largest_call_tokens", largest_tokens_},
          {"largest_call_dollars", largest_dollars_},
          {"timing_s", timing_s_}};
}

void Spend::restore(const nlohmann::json& j) {
  std::lock_guard<std::mutex> lock(mutex_);
  tokens_ = j.value("tokens", 0L);
  dollars_ = j.value("dollars", 0.0);
  calls_ = j.value("llm_calls", 0L);
  failed_calls_ = j.value("failed_calls", 0L);
  refused_calls_ = j.value("refused_calls", 0L);
  unusable_ = j.value("unusable_replies", 0L);
  largest_tokens_ = j.value("largest_call_tokens", 0L);
  largest_dollars_ = j.value("largest_call_dollars", 0.0);
  timing_s_ = j.value("timing_s", 0.0);
}

}  // namespace maxcode
