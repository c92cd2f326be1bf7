// The sampler's stack table: distinct call stacks with a count each, filled from the
// SIGPROF handler of any thread at once.
//
// A signal handler may not take locks or allocate, so the table is one preallocated
// block: an open-addressing hash table whose slots point into an arena of frames.
// A slot is claimed with a compare-and-swap (0 -> kClaimed), filled, then published by
// storing the stack's hash with release order; readers that see the hash may read the
// frames. A thread that meets a slot still being filled moves on, so the same stack
// can (rarely) occupy two slots: the reader of the profile file adds them up.
// Identical stacks, the common case in a hot loop, cost one atomic increment, which
// keeps memory bounded however long the program runs. Published slots are also listed
// in order, so that writing the file (and clearing after fork) touches only the pages
// in use, not the whole table: at exit that is the sampler's largest fixed cost.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace maxcode::sampler {

inline constexpr int kMaxDepth = 128;

struct Slot {
  std::atomic<std::uint64_t> key;    // 0 empty, kClaimed being filled, else hash | 2
  std::atomic<std::uint64_t> count;
  std::uint32_t offset;  // first frame in the arena
  std::uint32_t depth;
};

class StackTable {
 public:
  static constexpr std::uint64_t kClaimed = 1;
  static constexpr std::size_t kSlots = 1u << 16;        // distinct stacks
  static constexpr std::size_t kArenaWords = 1u << 21;   // frames of all distinct stacks
  static constexpr int kProbes = 64;

  // `memory` holds bytes() zeroed bytes (fresh anonymous pages).
  static constexpr std::size_t bytes() { return kSlots * sizeof(Slot) + kSlots * 4 + kArenaWords * 8; }
  void attach(void* memory) {
    char* base = static_cast<char*>(memory);
    slots_ = reinterpret_cast<Slot*>(base);
    used_ = reinterpret_cast<std::atomic<std::uint32_t>*>(base + kSlots * sizeof(Slot));
    arena_ = reinterpret_cast<std::uint64_t*>(base + kSlots * sizeof(Slot) + kSlots * 4);
  }
  bool ready() const { return slots_ != nullptr; }

  // Async-signal-safe. False when the table or the arena is full (the sample is dropped).
  bool add(const std::uint64_t* pcs, int depth) {
    const std::uint64_t key = hash(pcs, depth) | 2;
    std::size_t index = key & (kSlots - 1);
    for (int probe = 0; probe < kProbes; ++probe, index = (index + 1) & (kSlots - 1)) {
      Slot& slot = slots_[index];
      std::uint64_t seen = slot.key.load(std::memory_order_acquire);
      if (seen == key && same(slot, pcs, depth)) {
        slot.count.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
      if (seen != 0) continue;
      if (!slot.key.compare_exchange_strong(seen, kClaimed, std::memory_order_acquire)) continue;
      const std::uint64_t offset = arena_used_.fetch_add(depth, std::memory_order_relaxed);
      if (offset + depth > kArenaWords) {
        return false;  // the slot stays claimed: never published, never read
      }
      for (int i = 0; i < depth; ++i) arena_[offset + i] = pcs[i];
      slot.offset = static_cast<std::uint32_t>(offset);
      slot.depth = static_cast<std::uint32_t>(depth);
      slot.count.store(1, std::memory_order_relaxed);
      slot.key.store(key, std::memory_order_release);
      // Listed as index + 1: a reader that sees 0 meets an entry still being listed.
      used_[used_count_.fetch_add(1, std::memory_order_relaxed)].store(static_cast<std::uint32_t>(index) + 1,
                                                                        std::memory_order_release);
      return true;
    }
    return false;
  }

  // Calls fn(count, frames, depth) for every published stack. Async-signal-safe.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    const std::uint32_t n = used_count_.load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < n && i < kSlots; ++i) {
      const std::uint32_t listed = used_[i].load(std::memory_order_acquire);
      if (listed == 0) continue;
      const Slot& slot = slots_[listed - 1];
      if (slot.key.load(std::memory_order_acquire) <= kClaimed) continue;
      fn(slot.count.load(std::memory_order_relaxed), arena_ + slot.offset, static_cast<int>(slot.depth));
    }
  }

  // After fork: the child starts with an empty table. Only the forking thread exists.
  // Slots claimed but never published (the arena ran out) stay claimed: harmless.
  void clear() {
    const std::uint32_t n = used_count_.load(std::memory_order_relaxed);
    for (std::uint32_t i = 0; i < n && i < kSlots; ++i) {
      const std::uint32_t listed = used_[i].load(std::memory_order_relaxed);
      if (listed != 0) {
        slots_[listed - 1].key.store(0, std::memory_order_relaxed);
        slots_[listed - 1].count.store(0, std::memory_order_relaxed);
      }
      used_[i].store(0, std::memory_order_relaxed);
    }
    used_count_.store(0, std::memory_order_relaxed);
    arena_used_.store(0, std::memory_order_relaxed);
  }

 private:
  static std::uint64_t hash(const std::uint64_t* pcs, int depth) {
    std::uint64_t h = 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(depth);
    for (int i = 0; i < depth; ++i) {
      h ^= pcs[i];
      h *= 0xff51afd7ed558ccdull;
      h ^= h >> 33;
    }
    return h;
  }
  bool same(const Slot& slot, const std::uint64_t* pcs, int depth) const {
    if (slot.depth != static_cast<std::uint32_t>(depth)) return false;
    const std::uint64_t* frames = arena_ + slot.offset;
    for (int i = 0; i < depth; ++i)
      if (frames[i] != pcs[i]) return false;
    return true;
  }

  Slot* slots_ = nullptr;
  std::atomic<std::uint32_t>* used_ = nullptr;  // published slots, as index + 1
  std::uint64_t* arena_ = nullptr;
  std::atomic<std::uint32_t> used_count_{0};
  std::atomic<std::uint64_t> arena_used_{0};
};

}  // namespace maxcode::sampler
