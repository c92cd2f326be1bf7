#include "runner/store/history.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>

#include "runner/util/sqlite.h"
#include "runner/util/json_io.h"
#include "runner/util/stats.h"

namespace maxcode {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS nights (
  night TEXT NOT NULL, repository TEXT NOT NULL, target TEXT NOT NULL, file TEXT, commit_id TEXT,
  share REAL, self_ns REAL, samples INTEGER, original_s REAL, original_rounds TEXT,
  speedup REAL, speedup_low REAL, speedup_high REAL, status TEXT,
  pr_number INTEGER, pr_url TEXT, pr_state TEXT, commits_since TEXT, regression_check TEXT,
  PRIMARY KEY (night, repository, target));
)";

// A store written before the same-night check existed lacks its column.
bool has_column(sqlite3* db, const std::string& column);

struct Statement : SqliteStatement {
  Statement(sqlite3* db, const char* sql) : SqliteStatement(db, sql, "history store") {}
};

std::optional<double> optional_real(const Statement& s, int i) {
  if (s.column_null(i)) return std::nullopt;
  return s.column_real(i);
}

bool has_column(sqlite3* db, const std::string& column) {
  Statement s(db, "SELECT name FROM pragma_table_info('nights')");
  while (s.next())
    if (s.column_text(0) == column) return true;
  return false;
}

}  // namespace

HistoryStore::HistoryStore(const fs::path& file) : file_(file) {
  if (file.has_parent_path()) fs::create_directories(file.parent_path());
  db_ = open_sqlite(file, [&](const std::string& why) {
    return "cannot open history store " + file.string() + ": " + why;
  });
  for (const char* sql : {"PRAGMA journal_mode=WAL;", kSchema}) {
    if (auto error = exec_sqlite(db_, sql)) {
      sqlite3_close(db_);
      throw std::runtime_error("history store " + file.string() + ": " + *error);
    }
  }
  if (!has_column(db_, "regression_check"))
    Statement(db_, "ALTER TABLE nights ADD COLUMN regression_check TEXT").run();
}

HistoryStore::~HistoryStore() { sqlite3_close(db_); }

void HistoryStore::record(const NightResult& r) {
  Statement(db_,
            "INSERT OR REPLACE INTO nights (night, repository, target, file, commit_id, share, self_ns, samples, "
            "original_s, original_rounds, speedup, speedup_low, speedup_high, status, pr_number, pr_url, pr_state, "
            "commits_since, regression_check) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
            "?17, ?18, ?19)")
      .text(1, r.night).text(2, r.repository).text(3, r.target).text(4, r.file).text(5, r.commit).real(6, r.share)
      .real(7, r.self_ns).integer(8, static_cast<long long>(r.samples)).real(9, r.original_s)
      .text(10, dump_json(json(r.original_rounds))).real(11, r.speedup).real(12, r.speedup_low).real(13, r.speedup_high)
      .text(14, r.status).integer(15, r.pr_number).text(16, r.pr_url).text(17, r.pr_state)
      .text(18, dump_json(json(r.commits_since)))
      .text(19, r.check ? dump_json(to_json(*r.check)) : "")
      .run();
}

std::vector<NightResult> HistoryStore::all() const {
  Statement s(db_,
              "SELECT night, repository, target, file, commit_id, share, self_ns, samples, original_s, "
              "original_rounds, speedup, speedup_low, speedup_high, status, pr_number, pr_url, pr_state, "
              "commits_since, regression_check FROM nights ORDER BY repository, target, night");
  std::vector<NightResult> rows;
  while (s.next()) {
    NightResult r;
    r.night = s.column_text(0);
    r.repository = s.column_text(1);
    r.target = s.column_text(2);
    r.file = s.column_text(3);
    r.commit = s.column_text(4);
    r.share = s.column_real(5);
    r.self_ns = s.column_real(6);
    r.samples = static_cast<std::uint64_t>(s.column_integer(7));
    r.original_s = s.column_real(8);
    r.original_rounds = json::parse(s.column_text(9).empty() ? "[]" : s.column_text(9)).get<std::vector<double>>();
    r.speedup = optional_real(s, 10);
    r.speedup_low = optional_real(s, 11);
    r.speedup_high = optional_real(s, 12);
    r.status = s.column_text(13);
    r.pr_number = static_cast<int>(s.column_integer(14));
    r.pr_url = s.column_text(15);
    r.pr_state = s.column_text(16);
    r.commits_since =
        json::parse(s.column_text(17).empty() ? "[]" : s.column_text(17)).get<std::vector<std::string>>();
    if (!s.column_null(18) && !s.column_text(18).empty())
      r.check = regression_check_from_json(json::parse(s.column_text(18)));
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string HistoryStore::previous_commit(const std::string& repository, const std::string& night) const {
  Statement s(db_, "SELECT commit_id FROM nights WHERE repository = ?1 AND night < ?2 AND commit_id != '' "
                   "ORDER BY night DESC LIMIT 1");
  s.text(1, repository).text(2, night);
  return s.next() ? s.column_text(0) : "";
}

namespace {

// Two nights of one target, compared: `r` filled in; whether it is a regression by the
// rule.
bool regressed(const NightResult& before, const NightResult& now, const RegressionRule& rule, Regression& r) {
  r.repository = now.repository;
  r.target = now.target;
  r.file = now.file;
  r.previous_night = before.night;
  r.night = now.night;
  r.previous_commit = before.commit;
  r.commit = now.commit;
  r.commits = now.commits_since;
  if (before.original_s > 0 && now.original_s > 0) r.original_growth = now.original_s / before.original_s;
  // The original's timed rounds, where both nights have them: every round of the later
  // night slower than every round of the earlier one.
  bool rounds_apart = false;
  if (!before.original_rounds.empty() && !now.original_rounds.empty())
    rounds_apart = *std::min_element(now.original_rounds.begin(), now.original_rounds.end()) >
                   *std::max_element(before.original_rounds.begin(), before.original_rounds.end());
  // A same-night check was asked for and could not be made (the function was not
  // sampled in a round, a build failed): the benchmark's rounds of two nights are then
  // no evidence on their own, since the machine's load moves between nights (seen in
  // CI: an unchanged function flagged at 1.69x, 1.1 standard errors, its rounds apart).
  const bool check_missed = now.check && now.check->rounds == 0;
  if (check_missed) rounds_apart = false;
  bool significant = false;
  if (before.self_ns > 0 && now.self_ns > 0 && before.samples > 0 && now.samples > 0) {
    r.growth = now.self_ns / before.self_ns;
    const double variance = before.self_ns * before.self_ns / static_cast<double>(before.samples) +
                            now.self_ns * now.self_ns / static_cast<double>(now.samples);
    r.z = (now.self_ns - before.self_ns) / std::sqrt(variance);
    significant = r.growth >= 1 + rule.min_growth && (r.z >= rule.min_z || rounds_apart);
  } else if (!before.original_rounds.empty() && !now.original_rounds.empty()) {
    r.growth = r.original_growth;
    significant = r.growth >= 1 + rule.min_growth && rounds_apart;
  }
  // The same commit on both nights: the code did not change, the machine did.
  if (!before.commit.empty() && before.commit == now.commit) significant = false;
  // The same-night check, where the sweep made one, overrules the comparison of two
  // nights: it timed both commits under the same load.
  if (now.check && now.check->rounds > 0) {
    // Every round slower is not enough on its own: a docs-only commit was measured
    // 1.18x [1.04, 1.78], slower in 5 of 5 rounds, on a loaded CI machine. The
    // interval's low end must reach min_growth too, so a flag says "at least 10%
    // slower, with 95% confidence", not "slower, by a median of 10%" (the median lies
    // above the low end, so it needs no test of its own).
    significant = now.check->confirmed && now.check->low >= 1 + rule.min_growth;
    r.growth = now.check->growth;
    r.check = now.check;
  }
  return significant;
}

}  // namespace

std::vector<Regression> find_regressions(const std::vector<NightResult>& given, const RegressionRule& rule) {
  std::vector<NightResult> rows = given;
  std::stable_sort(rows.begin(), rows.end(), [](const NightResult& a, const NightResult& b) {
    return std::tie(a.repository, a.target, a.night) < std::tie(b.repository, b.target, b.night);
  });
  std::vector<Regression> found;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const NightResult& before = rows[i - 1];
    const NightResult& now = rows[i];
    if (before.repository != now.repository || before.target != now.target) continue;
    Regression r;
    if (regressed(before, now, rule, r)) found.push_back(std::move(r));
  }
  return found;
}

}  // namespace maxcode
