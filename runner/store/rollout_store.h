// The rollout store: every search step and candidate (prompt summary, code, verdict,
// reward, critique, timings) in SQLite, across runs, as training data for the next
// generation of policies and reward-to-go models. `maxcode export` reads it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/search/policy.h"

struct sqlite3;

namespace maxcode {

struct RunRecord {
  std::string run_id;
  std::string started_at;
  std::string repository;
  std::string commit;
  Target target;
  std::string language;
  std::string policy;
  std::string original;  // the original definition
  std::string system_prompt;
};

class RolloutStore {
 public:
  // Opens (creating if needed) the database; WAL mode, so a reader never blocks a run.
  explicit RolloutStore(const std::filesystem::path& file);
  ~RolloutStore();
  RolloutStore(const RolloutStore&) = delete;
  RolloutStore& operator=(const RolloutStore&) = delete;

  void begin_run(const RunRecord& run);  // an existing run_id (resume) is kept
  // `seq` orders candidates within a run; re-adding a seq (resume) replaces it.
  void add_candidate(const std::string& run_id, int seq, const TrajectoryEntry& entry, double best_before);
  void finish_run(const std::string& run_id, const std::optional<std::string>& winner_id,
                  const nlohmann::json& confirmed_speedup);

  sqlite3* handle() const { return db_; }

 private:
  void exec(const std::string& sql);
  sqlite3* db_ = nullptr;
  std::filesystem::path file_;
};

struct ExportCounts {
  int sft_pairs = 0;
  int rtg_samples = 0;
  int staged_rewards = 0;
};

// Writes into `out`: sft.jsonl (chat-message slow/fast pairs of confirmed winners that
// rewrote code), rtg.jsonl (state, candidate, best speedup reached later on that path),
// rewards.jsonl (staged reward: compiles 0.4, correct 0.4, faster 0.2).
ExportCounts export_training_data(const std::filesystem::path& db, const std::filesystem::path& out);

}  // namespace maxcode
