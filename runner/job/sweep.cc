#include "runner/job/sweep.h"

#include <cctype>
#include <ctime>

#include "runner/report/trend_page.h"
#include "runner/util/files.h"
#include "runner/util/format.h"
#include "runner/util/json_io.h"
#include "runner/util/json_reader.h"
#include "runner/util/slug.h"
#include "runner/workspace/clone.h"

namespace maxcode {

namespace fs = std::filesystem;
using nlohmann::json;

NightResult night_row(const std::string& night, const JobRecord& job, const TargetRecord& t,
                      const std::vector<std::string>& commits) {
  NightResult r;
  r.night = night;
  r.repository = job.repository;
  r.target = t.function;
  r.file = t.file;
  r.commit = job.commit;
  r.share = t.share.value_or(0);
  r.self_ns = t.self_ns;
  r.samples = t.samples;
  r.original_s = t.original_s;
  r.original_rounds = t.original_rounds;
  r.check = t.check;
  if (t.speedup) {
    r.speedup = t.speedup->median;
    r.speedup_low = t.speedup->low;
    r.speedup_high = t.speedup->high;
  }
  r.status = t.status == TargetStatus::kDone ? target_verdict_name(t.verdict) : target_status_name(t.status);
  if (t.pr) {
    r.pr_number = t.pr->number;
    r.pr_url = t.pr->url;
    r.pr_state = t.pr->outcome;
  } else {
    r.pr_state = t.no_pr;
  }
  r.commits_since = commits;
  return r;
}

namespace {

Budget budget_of(const Allowance& part, const Budget& given) {
  Budget b = given;
  b.evaluations = std::max(part.evaluations, 1);
  b.wall_s = part.wall_s > 0 ? part.wall_s : 1;
  if (part.tokens > 0) b.tokens = part.tokens;
  if (part.dollars > 0) b.dollars = part.dollars;
  if (part.gpu_s > 0) b.gpu_s = part.gpu_s;
  return b;
}

// YYYY-MM-DD, digits where the letters are (the calendar is not checked).
bool is_date(std::string_view text) {
  if (text.size() != 10) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 4 || i == 7;
    if (dash ? text[i] != '-' : !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

}  // namespace

std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &tm);
  return text;
}

SweepInput load_sweep_input(const fs::path& file) {
  json document;
  try {
    document = parse_json_input(read_text(file), file.string());
  } catch (const std::exception& e) {  // JsonInputError, or the file cannot be read
    throw JobInputError(e.what());
  }
  const std::string label = file.string();
  const JsonObject f(
      JsonNode(document, label, raise_as<JobInputError>),
      {"$schema", "history", "out", "night", "budget", "min_growth", "min_z", "same_night_check", "jobs"});
  const fs::path base = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  auto path_field = [&](const char* key, const std::string& fallback) {
    auto node = f.get(key);
    if (!node) return base / fallback;
    const fs::path p = node->non_empty_string();
    return p.is_absolute() ? p : base / p;
  };
  SweepInput in;
  in.history = path_field("history", "history.sqlite");
  in.out = path_field("out", file.stem().string() + "-out");
  if (auto night = f.get("night")) {
    in.night = night->value().is_string() ? night->string() : "";
    if (!is_date(in.night)) night->fail("expected a date YYYY-MM-DD, got " + excerpt(dump_json(night->value()), 80));
  }
  if (auto budget = f.get("budget")) {
    // The job reader checks the budget's fields the same way.
    const JobInput probe = parse_job_input({{"repository", "-"}, {"budget", budget->value()}}, label);
    in.budget = probe.budget;
  }
  in.rule.min_growth = f.number("min_growth", in.rule.min_growth, kPositive);
  in.rule.min_z = f.number("min_z", in.rule.min_z, kPositive);
  in.same_night_check = f.boolean("same_night_check", in.same_night_check);
  const JsonNode jobs = f.require("jobs");
  jobs.expect(jobs.value().is_array() && !jobs.value().empty(), "a non-empty array of job inputs");
  for (std::size_t i = 0; i < document["jobs"].size(); ++i)
    in.jobs.push_back(parse_job_input(document["jobs"][i], label + ": jobs[" + std::to_string(i) + "]"));
  return in;
}

namespace {

// One job of the night: run (resumed when this night's was interrupted), and every
// searched target's row written to the history with the commits since the night before.
JobRecord run_night_job(const SweepRun& run, JobInput input, const fs::path& out, const std::string& night,
                        HistoryStore& history, Progress& progress) {
  // The previous night's commit, for the same-night check of every target.
  if (run.input.same_night_check && input.compare_with.empty())
    input.compare_with = history.previous_commit(url_without_credentials(input.repository), night);
  std::unique_ptr<Delivery> delivery = run.make_delivery ? run.make_delivery(input) : nullptr;
  JobRun job;
  job.input = input;
  job.out = out;
  job.resume = fs::exists(out / "job.json");  // this night's job, interrupted: go on
  job.git_token = run.git_token;
  job.ssh_key = run.ssh_key;
  job.delivery = delivery.get();
  job.stop = run.stop;
  JobRecord record = run_job(job, progress);
  const std::string previous = history.previous_commit(record.repository, night);
  const std::vector<std::string> commits = previous.empty() || previous == record.commit
                                               ? std::vector<std::string>{}
                                               : commits_between(out / "source", previous, record.commit);
  for (const TargetRecord& t : record.targets)
    if (t.status != TargetStatus::kPending) history.record(night_row(night, record, t, commits));
  return record;
}

// This night's regressions, the trend page rewritten from the whole history, and each
// regression told.
void report_night(const SweepInput& in, HistoryStore& history, SweepResult& result, Progress& progress) {
  const std::vector<NightResult> rows = history.all();
  for (const Regression& r : find_regressions(rows, in.rule))
    if (r.night == result.night) result.regressions.push_back(r);
  result.trend_page = in.out / "trend.html";
  fs::create_directories(in.out);
  write_text(result.trend_page, render_trend_page(rows, find_regressions(rows, in.rule)));
  for (const Regression& r : result.regressions) {
    progress.note("regression: " + r.target + " in " + r.repository + ": own time " +
                  format_numbers("%.2fx", r.growth) + " since " + r.previous_night + " (" + regression_evidence(r) +
                  ")");
    for (const std::string& c : r.commits) progress.note("  " + c);
  }
}

}  // namespace

SweepResult run_sweep(const SweepRun& run, Progress& progress) {
  const SweepInput& in = run.input;
  SweepResult result;
  result.night = in.night.empty() ? utc_date() : in.night;
  HistoryStore history(in.history);
  const int n = static_cast<int>(in.jobs.size());
  // The sweep's budget is split across its jobs as a job's is across its targets.
  SearchConfig defaults;
  Allowance total;
  const bool split = in.budget.evaluations || in.budget.wall_s || in.budget.tokens || in.budget.dollars > 0 ||
                     in.budget.gpu_s > 0;
  if (split) total = job_allowance(in.budget, defaults, n);
  Allowance spent;
  for (int i = 0; i < n; ++i) {
    if (run.stop && run.stop->load()) break;
    JobInput input = in.jobs[static_cast<std::size_t>(i)];
    const fs::path out =
        in.out / result.night / (std::to_string(i + 1) + "-" + ref_slug(url_without_credentials(input.repository)));
    if (split) input.budget = budget_of(next_target_allowance(total, spent, n - i), input.budget);
    progress.note("sweep " + result.night + ": job " + std::to_string(i + 1) + "/" + std::to_string(n) + ": " +
                  url_without_credentials(input.repository));
    JobRecord record = run_night_job(run, std::move(input), out, result.night, history, progress);
    spent += record.spent;
    result.exit_code = std::max(result.exit_code, record.exit_code);
    result.jobs.push_back({record.repository, out, record});
  }
  report_night(in, history, result, progress);
  if (run.stop && run.stop->load()) result.exit_code = std::max(result.exit_code, kJobStopped);
  // A night that went well but flagged a regression is not a success: a scheduled
  // workflow must be able to fail on it. A worse code (a failed job) says more and stays.
  if (result.exit_code == kJobCompleted && !result.regressions.empty()) result.exit_code = kSweepRegression;
  return result;
}

std::vector<Regression> write_trend_page(const fs::path& history_file, const fs::path& page, const RegressionRule& rule) {
  if (!fs::exists(history_file)) throw std::runtime_error(history_file.string() + ": no history store there");
  HistoryStore history(history_file);
  const std::vector<NightResult> rows = history.all();
  std::vector<Regression> regressions = find_regressions(rows, rule);
  if (page.has_parent_path()) fs::create_directories(page.parent_path());
  write_text(page, render_trend_page(rows, regressions));
  return regressions;
}

}  // namespace maxcode
