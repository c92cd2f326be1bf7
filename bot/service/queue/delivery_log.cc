#include "bot/service/queue/delivery_log.h"

#include <algorithm>
#include <tuple>

#include "runner/util/enum_names.h"
#include "runner/util/files.h"

namespace maxcode::bot::service {

namespace {

constexpr EnumNames<DeliveryState, 4> kStateNames{{
    {DeliveryState::kReceived, "received"},
    {DeliveryState::kHandled, "handled"},
    {DeliveryState::kRejected, "rejected"},
    {DeliveryState::kFailed, "failed"},
}};

}  // namespace

std::string delivery_state_name(DeliveryState state) { return enum_name(kStateNames, state); }

DeliveryLog::Recorded DeliveryLog::record(const std::string& id, const std::string& event, const std::string& payload) {
  using Kind = Recorded::Kind;
  auto db = access_.pool.acquire();
  const std::string hash = sha256_hex(payload);
  // No transaction: each statement below is right on its own against another replica
  // (the guarded UPDATE, the INSERT's ON CONFLICT), and this is the webhook's hot path.
  std::optional<std::string> state;  // the stored name: shown as is in the answer
  const std::string received = delivery_state_name(DeliveryState::kReceived);
  const std::string failed = delivery_state_name(DeliveryState::kFailed);
  if (db->dialect() == SqlDialect::kPostgres) {
    // The same three steps (known id? a replay? store it) as one statement: a round trip
    // to the server each cost the webhook's answer time (SQLite, in-process, cannot put
    // an INSERT inside WITH and has no round trips to save). Casts: an untyped value
    // in INSERT ... SELECT would be text.
    std::string first;
    int inserted = 0;
    db->run(
        "WITH prior AS (SELECT state FROM deliveries WHERE id = ?1), "
        "replay AS (SELECT id FROM deliveries WHERE body_sha256 = ?5 AND received_at >= ?6::double precision "
        "AND NOT EXISTS (SELECT 1 FROM prior) ORDER BY received_at LIMIT 1), "
        "stored AS (INSERT INTO deliveries(id, event, received_at, payload, body_sha256) "
        "SELECT ?1::text, ?2::text, ?3::double precision, ?4::text, ?5::text "
        "WHERE NOT EXISTS (SELECT 1 FROM prior) AND NOT EXISTS (SELECT 1 FROM replay) "
        "ON CONFLICT(id) DO NOTHING RETURNING id) "
        "SELECT (SELECT state FROM prior), (SELECT id FROM replay), (SELECT COUNT(*) FROM stored)",
        {id, event, access_.now(), payload, hash, access_.now() - access_.options.replay_window_s},
        [&](const SqlRow& r) {
          if (!r.is_null(0)) state = r.text(0);
          if (!r.is_null(1)) first = r.text(1);
          inserted = static_cast<int>(r.integer(2));
        });
    if (inserted == 1) return {Kind::kStored, ""};
    if (!state && !first.empty()) return {Kind::kReplayed, first};
    if (!state) return {Kind::kDuplicate, received};  // another replica stored it just now
  } else {
    db->run("SELECT state FROM deliveries WHERE id = ?1", {id}, [&](const SqlRow& r) { state = r.text(0); });
  }
  if (state == failed) {
    // Redelivered after it failed (given up, or an error): handled again, from the start.
    // The state in the WHERE: of two replicas given the redelivery at once, one retries.
    if (db->run("UPDATE deliveries SET state = ?4, payload = ?2, body_sha256 = ?3, attempts = 0, retry_at = 0, "
                "lease_expires = 0, note = 'redelivered after: ' || note WHERE id = ?1 AND state = ?5",
                {id, payload, hash, received, failed}) == 1)
      return {Kind::kRetried, failed};
    return {Kind::kDuplicate, received};
  }
  if (state) return {Kind::kDuplicate, *state};
  std::string first;
  db->run("SELECT id FROM deliveries WHERE body_sha256 = ?1 AND received_at >= ?2 ORDER BY received_at LIMIT 1",
          {hash, access_.now() - access_.options.replay_window_s}, [&](const SqlRow& r) { first = r.text(0); });
  if (!first.empty()) return {Kind::kReplayed, first};
  // DO NOTHING: another replica may store the same id between the SELECT and here.
  if (db->run("INSERT INTO deliveries(id, event, received_at, payload, body_sha256) VALUES(?1, ?2, ?3, ?4, ?5) "
              "ON CONFLICT(id) DO NOTHING",
              {id, event, access_.now(), payload, hash}) == 0)
    return {Kind::kDuplicate, received};
  return {Kind::kStored, ""};
}

std::vector<Delivery> DeliveryLog::pending(int limit) {
  auto db = access_.pool.acquire();
  std::vector<Delivery> out;
  db->run(
      "SELECT id, event, payload, received_at FROM deliveries WHERE state = ?3 AND retry_at <= ?2 "
      "ORDER BY received_at, id LIMIT ?1",
      {std::int64_t{limit}, access_.now(), delivery_state_name(DeliveryState::kReceived)}, [&](const SqlRow& r) {
        out.push_back({r.text(0), r.text(1), r.text(2), r.real(3)});
      });
  return out;
}

std::vector<Delivery> DeliveryLog::take(int limit) {
  auto db = access_.pool.acquire();
  const double t = access_.now();
  std::vector<Delivery> out;
  // One statement (a round trip to the server, not one per delivery): the rows the
  // subquery picks are locked, those another replica holds passed over.
  db->run(
      "UPDATE deliveries SET lease_expires = ?3 WHERE id IN (SELECT id FROM deliveries WHERE state = ?4 "
      "AND retry_at <= ?2 AND lease_expires <= ?2 ORDER BY received_at, id LIMIT ?1" +
          db->lock_rows_skip_locked() + ") RETURNING id, event, payload, received_at",
      {std::int64_t{limit}, t, t + access_.options.work_lease_s, delivery_state_name(DeliveryState::kReceived)},
      [&](const SqlRow& r) {
        out.push_back({r.text(0), r.text(1), r.text(2), r.real(3)});
      });
  // RETURNING keeps no order.
  std::sort(out.begin(), out.end(), [](const Delivery& x, const Delivery& y) {
    return std::tie(x.received_at, x.id) < std::tie(y.received_at, y.id);
  });
  return out;
}

void DeliveryLog::finish(const std::string& id, DeliveryState state, const std::string& note) {
  auto db = access_.pool.acquire();
  // The payload is kept only until handled: it may be 25 MB and says nothing later.
  db->run("UPDATE deliveries SET state = ?2, note = ?3, payload = '', lease_expires = 0 WHERE id = ?1",
          {id, delivery_state_name(state), note});
}

int DeliveryLog::attempts(const std::string& id) {
  auto db = access_.pool.acquire();
  int attempts = 0;
  db->run("SELECT attempts FROM deliveries WHERE id = ?1", {id},
          [&](const SqlRow& r) { attempts = static_cast<int>(r.integer(0)); });
  return attempts;
}

bool DeliveryLog::defer(const std::string& id, const std::string& error, int max_attempts, double wait_s) {
  auto db = access_.pool.acquire();
  int attempts = 0;
  db->run("SELECT attempts FROM deliveries WHERE id = ?1", {id},
          [&](const SqlRow& r) { attempts = static_cast<int>(r.integer(0)) + 1; });
  if (attempts >= max_attempts) {
    db->run("UPDATE deliveries SET state = ?4, note = ?2, attempts = ?3, payload = '', lease_expires = 0 WHERE id = ?1",
            {id, error, std::int64_t{attempts}, delivery_state_name(DeliveryState::kFailed)});
    return false;
  }
  db->run("UPDATE deliveries SET note = ?2, attempts = ?3, retry_at = ?4, lease_expires = 0 WHERE id = ?1",
          {id, error, std::int64_t{attempts}, access_.now() + wait_s});
  return true;
}

std::int64_t DeliveryLog::count() {
  auto db = access_.pool.acquire();
  std::int64_t n = 0;
  db->run("SELECT COUNT(*) FROM deliveries", {}, [&](const SqlRow& r) { n = r.integer(0); });
  return n;
}

}  // namespace maxcode::bot::service
