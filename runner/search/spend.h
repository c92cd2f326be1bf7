// What a search has spent: LLM tokens and dollars, calls, GPU/CPU timing seconds.
// Shared by the policy, the critic and the reranker, which call models concurrently.
#pragma once

#include <mutex>

#include <nlohmann/json.hpp>

#include "runner/llm/provider.h"

namespace maxcode {

class Spend {
 public:
  void add(const llm::Usage& usage) {
    std::lock_guard<std::mutex> lock(mutex_);
    tokens_ += usage.input_tokens + usage.output_tokens;
    dollars_ += usage.cost_usd;
    ++calls_;
  }
  void add_timing_seconds(double s) {
    std::lock_guard<std::mutex> lock(mutex_);
    timing_s_ += s;
  }
  long tokens() const { std::lock_guard<std::mutex> l(mutex_); return tokens_; }
  double dollars() const { std::lock_guard<std::mutex> l(mutex_); return dollars_; }
  double timing_seconds() const { std::lock_guard<std::mutex> l(mutex_); return timing_s_; }
  nlohmann::json to_json() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {{"tokens", tokens_}, {"dollars", dollars_}, {"llm_calls", calls_}, {"timing_s", timing_s_}};
  }
  void restore(const nlohmann::json& j) {
    std::lock_guard<std::mutex> lock(mutex_);
    tokens_ = j.value("tokens", 0L);
    dollars_ = j.value("dollars", 0.0);
    calls_ = j.value("llm_calls", 0L);
    timing_s_ = j.value("timing_s", 0.0);
  }

 private:
  mutable std::mutex mutex_;
  long tokens_ = 0;
  double dollars_ = 0;
  long calls_ = 0;
  double timing_s_ = 0;
};

}  // namespace maxcode
