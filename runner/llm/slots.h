// A cap on calls in flight per provider: endpoints rate-limit per key, and local servers
// (vLLM, llama.cpp) queue or fail beyond their batch size.
#pragma once

#include <condition_variable>
#include <mutex>

namespace maxcode::llm {

class Slots {
 public:
  explicit Slots(int count) : free_(count < 1 ? 1 : count) {}
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;

  // Holds one slot for its lifetime.
  class Held {
   public:
    explicit Held(Slots& slots) : slots_(slots) { slots_.acquire(); }
    ~Held() { slots_.release(); }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    Slots& slots_;
  };

 private:
  void acquire() {
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [&] { return free_ > 0; });
    --free_;
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      ++free_;
    }
    freed_.notify_one();
  }

  std::mutex mutex_;
  std::condition_variable freed_;
  int free_;
};

}  // namespace maxcode::llm
