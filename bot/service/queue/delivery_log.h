// The webhook deliveries the service was given: stored before they are answered, handled
// by one replica at a time (leased), retried when handling failed for a reason that may
// pass, and recognised when redelivered (same id) or replayed (same bytes).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "bot/service/queue/store_access.h"

namespace maxcode::bot::service {

// A delivery's state in the store: received (to be handled; also while deferred) ->
// handled, rejected (a payload the App cannot read) or failed (handling failed; a
// redelivery tries again). The store holds it by name; the code compares the enum.
enum class DeliveryState { kReceived, kHandled, kRejected, kFailed };
// "received", "handled", "rejected", "failed".
std::string delivery_state_name(DeliveryState state);
inline std::ostream& operator<<(std::ostream& out, DeliveryState state) { return out << delivery_state_name(state); }

struct Delivery {
  std::string id, event;
  std::string payload;
  double received_at = 0;
};

class DeliveryLog {
 public:
  explicit DeliveryLog(StoreAccess access) : access_(access) {}

  // What became of a delivery offered to the store.
  struct Recorded {
    enum class Kind {
      kStored,     // new: to be handled
      kRetried,    // a redelivery (same id) of one whose handling failed: handled again
      kDuplicate,  // a redelivery of one handled, rejected or still pending: dropped
      kReplayed,   // the same bytes as another delivery within the replay window: dropped
    } kind = Kind::kStored;
    std::string original;  // kDuplicate: its state; kReplayed: the id first seen with that body
    explicit operator bool() const { return kind == Kind::kStored || kind == Kind::kRetried; }
  };
  // Stores a delivery unless it was seen before. GitHub keeps the X-GitHub-Delivery id
  // when it (or an operator) redelivers: a known id is dropped, unless its handling
  // failed, and then it is tried again. GitHub never sends the same bytes under two
  // ids (a payload carries the ids and times of what happened), so a body whose
  // SHA-256 matches another delivery's within `replay_window_s` is a replay of captured
  // bytes (the signature covers the body, not the id) and is dropped.
  Recorded record(const std::string& id, const std::string& event, const std::string& payload);
  // Deliveries stored but not yet handled (oldest first): the work left after a crash.
  std::vector<Delivery> pending(int limit = 100);
  // Pending deliveries that no replica holds, leased to this one for work_lease_s
  // (oldest first): what the event worker handles. finish and defer end the lease. With
  // SQLite the leases of a process before this one are void (one process owns the file).
  std::vector<Delivery> take(int limit = 50);
  void finish(const std::string& id, DeliveryState state, const std::string& note);
  // Handling failed for a reason that may pass (GitHub 5xx, a rate limit): try again
  // after `wait_s` (as GitHub asked; github_retry.h). False when the attempts are spent
  // (the delivery is then failed).
  bool defer(const std::string& id, const std::string& error, int max_attempts, double wait_s);
  // Failed tries of the delivery's handling so far.
  int attempts(const std::string& id);
  std::int64_t count();

 private:
  StoreAccess access_;
};

}  // namespace maxcode::bot::service
