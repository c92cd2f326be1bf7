#include "runner/store/rollout_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "runner/search/feedback.h"
#include "runner/util/sqlite.h"
#include "runner/util/files.h"
#include "runner/util/json_io.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, started_at TEXT, repository TEXT, commit_id TEXT, file TEXT, function TEXT,
  language TEXT, policy TEXT, original TEXT, system_prompt TEXT,
  winner_id TEXT, confirmed_speedup TEXT);
CREATE TABLE IF NOT EXISTS candidates (
  run_id TEXT NOT NULL REFERENCES runs(run_id), seq INTEGER NOT NULL, step INTEGER, candidate_id TEXT,
  origin TEXT, kind TEXT, prompt_summary TEXT, code TEXT, rationale TEXT, verdict TEXT, reason TEXT,
  reward REAL, speedup REAL, speedup_low REAL, speedup_high REAL, critique TEXT, feedback TEXT,
  timing TEXT, tokens INTEGER, cost_usd REAL, rerank_score REAL, best_before REAL, duplicate_of TEXT,
  PRIMARY KEY (run_id, seq));
)";

struct Statement : SqliteStatement {
  Statement(sqlite3* db, const char* sql) : SqliteStatement(db, sql, "rollout store") {}
};

// A candidate's verdict as the store holds it, by name; a name of no known verdict is
// an error naming the store and the candidate.
Verdict stored_verdict(const fs::path& db, const std::string& candidate_id, const std::string& name) {
  try {
    return verdict_from_name(name);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(db.string() + ": candidate " + candidate_id + ": " + e.what());
  }
}

std::string kind_of(const Candidate& c) {
  return c.definition ? "definition" : c.diff ? "diff" : c.knobs.empty() ? "none" : "knobs";
}

}  // namespace

RolloutStore::RolloutStore(const fs::path& file) : file_(file) {
  if (file.has_parent_path()) fs::create_directories(file.parent_path());
  db_ = open_sqlite(file, [&](const std::string& why) {
    return "cannot open rollout store " + file.string() + ": " + why;
  });
  exec("PRAGMA journal_mode=WAL;");
  exec(kSchema);
}

RolloutStore::~RolloutStore() { sqlite3_close(db_); }

void RolloutStore::exec(const std::string& sql) {
  if (auto error = exec_sqlite(db_, sql))
    throw std::runtime_error("rollout store " + file_.string() + ": " + *error);
}

void RolloutStore::begin_run(const RunRecord& r) {
  Statement(db_,
            "INSERT OR IGNORE INTO runs (run_id, started_at, repository, commit_id, file, function, language, policy, "
            "original, system_prompt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
      .text(1, r.run_id).text(2, r.started_at).text(3, r.repository).text(4, r.commit).text(5, r.target.file)
      .text(6, r.target.function).text(7, r.language).text(8, r.policy).text(9, r.original).text(10, r.system_prompt)
      .run();
}

void RolloutStore::add_candidate(const std::string& run_id, int seq, const TrajectoryEntry& entry, double best_before) {
  const Candidate& c = entry.candidate;
  const Evaluation& e = entry.evaluation;
  std::optional<double> speedup, low, high;
  if (e.timing) {
    speedup = e.timing->speedup.median;
    low = e.timing->speedup.low;
    high = e.timing->speedup.high;
  }
  Statement(db_,
            "INSERT OR REPLACE INTO candidates (run_id, seq, step, candidate_id, origin, kind, prompt_summary, code, "
            "rationale, verdict, reason, reward, speedup, speedup_low, speedup_high, critique, feedback, timing, tokens, "
            "cost_usd, rerank_score, best_before, duplicate_of) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
            "?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)")
      .text(1, run_id).integer(2, seq).integer(3, entry.step).text(4, c.id).text(5, c.origin).text(6, kind_of(c))
      .text(7, c.prompt_summary).text(8, e.code).text(9, c.rationale).text(10, verdict_name(e.verdict))
      .text(11, e.reason).real(12, e.reward()).real(13, speedup).real(14, low).real(15, high).text(16, e.critique)
      .text(17, render_feedback(e)).text(18, e.timing ? dump_json(to_json(*e.timing)) : "").integer(19, c.tokens)
      .real(20, c.cost_usd).real(21, c.rerank_score).real(22, best_before)
      .text(23, e.duplicate_of.value_or(""))
      .run();
}

void RolloutStore::finish_run(const std::string& run_id, const std::optional<std::string>& winner_id,
                              const nlohmann::json& confirmed_speedup) {
  Statement(db_, "UPDATE runs SET winner_id = ?1, confirmed_speedup = ?2 WHERE run_id = ?3")
      .text(1, winner_id.value_or("")).text(2, dump_json(confirmed_speedup)).text(3, run_id).run();
}

namespace {

// One run of the store and its candidates (duplicates left out), in order.
struct ExportRun {
  std::string run_id, function, file, language, original, system, winner, confirmed_speedup;
  struct Row {
    std::string id, kind, code;
    Verdict verdict;
    std::string prompt_summary;
    double reward, best_before;
  };
  std::vector<Row> rows;
};

// The three training files, written one run at a time.
struct ExportFiles {
  std::ofstream sft, rtg, rewards;
  ExportCounts counts;

  // (a) A confirmed improvement that rewrote the code: original -> winner.
  void write_sft(const ExportRun& run) {
    const std::string user = "Optimize the function `" + run.function + "` from `" + run.file + "`.\n\n```" +
                             run.language + "\n" + run.original +
                             "\n```\n\nReply with one fenced code block holding the complete new definition.";
    for (const ExportRun::Row& r : run.rows) {
      if (r.id != run.winner || r.kind != "definition") continue;
      nlohmann::json speedup = nlohmann::json::parse(run.confirmed_speedup, nullptr, false);
      sft << dump_json(nlohmann::json{
                 {"messages",
                  {{{"role", "system"}, {"content", run.system}},
                   {{"role", "user"}, {"content", user}},
                   {{"role", "assistant"}, {"content", "```" + run.language + "\n" + r.code + "\n```"}}}},
                 {"run_id", run.run_id},
                 {"speedup", speedup}})
          << "\n";
      ++counts.sft_pairs;
    }
  }

  // (b) Reward to go: the best reward reached from each candidate on, along the run;
  // (c) staged reward (KernelCompare): compiles 0.4, correct 0.4, faster 0.2.
  void write_rewards(const ExportRun& run) {
    double best_later = 0;
    std::vector<double> to_go(run.rows.size());
    for (std::size_t i = run.rows.size(); i-- > 0;) to_go[i] = best_later = std::max(best_later, run.rows[i].reward);
    for (std::size_t i = 0; i < run.rows.size(); ++i) {
      const ExportRun::Row& r = run.rows[i];
      rtg << dump_json(nlohmann::json{{"run_id", run.run_id},
                                      {"state",
                                       {{"function", run.function},
                                        {"original", run.original},
                                        {"attempts_before", i},
                                        {"best_speedup_before", r.best_before},
                                        {"observation", r.prompt_summary}}},
                                      {"candidate", r.code},
                                      {"reward_to_go", to_go[i]}})
          << "\n";
      ++counts.rtg_samples;
      const bool compiles = r.verdict != Verdict::kCompileError && r.verdict != Verdict::kRejected;
      const bool correct = r.verdict == Verdict::kFaster || r.verdict == Verdict::kNotFaster;
      const bool faster = r.verdict == Verdict::kFaster;
      rewards << dump_json(nlohmann::json{{"run_id", run.run_id},
                                          {"candidate_id", r.id},
                                          {"verdict", verdict_name(r.verdict)},
                                          {"compiles", compiles},
                                          {"correct", correct},
                                          {"faster", faster},
                                          {"reward", 0.4 * compiles + 0.4 * correct + 0.2 * faster}})
              << "\n";
      ++counts.staged_rewards;
    }
  }
};

}  // namespace

ExportCounts export_training_data(const fs::path& db_file, const fs::path& out) {
  if (!fs::exists(db_file)) throw std::runtime_error(db_file.string() + ": no such rollout store");
  RolloutStore store(db_file);
  fs::create_directories(out);
  ExportFiles files{
      std::ofstream(out / "sft.jsonl"), std::ofstream(out / "rtg.jsonl"), std::ofstream(out / "rewards.jsonl"), {}};
  Statement runs(store.handle(),
                 "SELECT run_id, function, file, language, original, system_prompt, winner_id, confirmed_speedup "
                 "FROM runs ORDER BY started_at, run_id");
  while (runs.next()) {
    ExportRun run{runs.column_text(0), runs.column_text(1), runs.column_text(2),
                  runs.column_text(3), runs.column_text(4), runs.column_text(5),
                  runs.column_text(6), runs.column_text(7), {}};
    Statement cands(store.handle(),
                    "SELECT candidate_id, kind, code, verdict, prompt_summary, reward, best_before FROM candidates "
                    "WHERE run_id = ?1 AND duplicate_of = '' ORDER BY seq");
    cands.text(1, run.run_id);
    while (cands.next())
      run.rows.push_back({cands.column_text(0), cands.column_text(1), cands.column_text(2),
                          stored_verdict(db_file, cands.column_text(0), cands.column_text(3)), cands.column_text(4),
                          cands.column_real(5), cands.column_real(6)});
    files.write_sft(run);
    files.write_rewards(run);
  }
  return files.counts;
}

}  // namespace maxcode
