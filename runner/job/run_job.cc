#include "runner/job/run_job.h"
#include "runner/util/format.h"

#include <algorithm>
#include <cstdio>

#include "runner/evaluate/environment.h"
#include "runner/job/job_failure.h"
#include "runner/job/job_report.h"
#include "runner/job/job_targets.h"
#include "runner/job/regression_check.h"
#include "runner/job/target_search.h"
#include "runner/profile/benchmark_entries.h"
#include "runner/report/html_report.h"
#include "runner/search/method.h"
#include "runner/util/error.h"
#include "runner/util/files.h"
#include "runner/util/json_io.h"
#include "runner/workspace/clone.h"

namespace maxcode {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class JobRunner {
 public:
  JobRunner(const JobRun& run, Progress& progress) : run_(run), progress_(progress) {}

  JobRecord go() {
    if (!run_.resume && fs::exists(job_file())) {
      // Never overwrite another job's record.
      job_.status = JobStatus::kFailed;
      job_.error_kind = "usage";
      job_.error = run_.out.string() + " holds a job already: continue it with --resume " + run_.out.string() +
                   ", or choose another --out";
      job_.exit_code = kJobUsage;
      progress_.note("maxcode run: error: " + job_.error);
      return job_;
    }
    try {
      start();
      for (void (JobRunner::*stage)() : {&JobRunner::clone, &JobRunner::load_project, &JobRunner::choose_targets,
                                         &JobRunner::search_targets, &JobRunner::compare_commits}) {
        if (stop_requested()) break;
        (this->*stage)();
      }
      finish();
    } catch (const JobFailure& failure) {
      fail(failure.kind, failure.what());
    } catch (const std::exception& e) {
      // Anything else (a file system error on a hostile input, a bug) still ends in a
      // job.json that says what happened, not in an abort with no record.
      fail("internal", std::string("internal error: ") + e.what());
    }
    return job_;
  }

 private:
  bool stop_requested() const { return run_.stop && run_.stop->load(); }
  fs::path job_file() const { return run_.out / "job.json"; }
  fs::path source_dir() const { return run_.out / "source"; }

  void save() {
    write_job_record(job_file(), job_);
    write_text(run_.out / "report.html", render_job_report(job_, run_.out));
  }

  void fail(const std::string& kind, const std::string& message) {
    job_.status = JobStatus::kFailed;
    job_.error_kind = kind;
    job_.error = message;
    job_.exit_code = kJobFailed;
    job_.finished_at = utc_now();
    progress_.note("maxcode run: error: " + message);
    save();
  }

  void start() {
    fs::create_directories(run_.out);
    if (run_.resume) {
      job_ = read_job_record(job_file());
      if (job_.status == JobStatus::kCompleted) {
        progress_.note("job: " + job_status_name(job_.status) + " already; nothing to resume (" + job_file().string() +
                       ")");
        already_done_ = true;
        return;
      }
      job_.status = JobStatus::kRunning;
      job_.error.clear();
      job_.error_kind.clear();
      progress_.note("job: resuming " + job_.repository + " at " + job_.commit.substr(0, 12) + ", " +
                     std::to_string(job_.targets.size()) + " target(s)");
    } else {
      job_.input = run_.input;
      job_.repository = url_without_credentials(run_.input.repository);
      job_.started_at = utc_now();
    }
    save();
  }

  void clone() {
    if (already_done_) return;
    // A resumed job works on the very commit it started on, whatever the ref says now.
    if (run_.resume && !job_.commit.empty() && head_commit(source_dir()) == job_.commit) {
      progress_.note("clone: reusing " + source_dir().string());
      return;
    }
    std::error_code ignored;
    fs::remove_all(source_dir(), ignored);
    CloneRequest request;
    request.url = job_.input.repository;
    request.ref = run_.resume && !job_.commit.empty() ? job_.commit : job_.input.ref;
    request.destination = source_dir();
    request.token = run_.git_token;
    request.ssh_key = run_.ssh_key;
    progress_.note("clone: " + job_.repository + (request.ref.empty() ? "" : " at " + request.ref));
    try {
      const Checkout checkout = clone_at_ref(request);
      if (job_.ref.empty()) job_.ref = checkout.ref;
      job_.commit = checkout.commit;
    } catch (const CloneError& e) {
      throw JobFailure(std::string("clone-") + clone_error_kind_name(e.kind), e.what());
    }
    progress_.note("clone: " + job_.ref + " is " + job_.commit.substr(0, 12));
    save();
  }

  void load_project() {
    if (already_done_) return;
    const std::string relative = job_.input.config.empty() ? ".maxcode.json" : job_.input.config;
    config_file_ = source_dir() / relative;
    // The job document names the file and the repository holds it: neither may lead out
    // of the clone, by `..` or by a symbolic link committed to the repository.
    if (escapes_root(relative) || !resolves_inside(source_dir(), config_file_))
      throw JobFailure("config", "config: \"" + excerpt(relative, 200) + "\" leads outside the repository");
    std::error_code missing;
    if (!fs::exists(config_file_, missing))
      throw JobFailure("no-config", job_.repository + " has no " + relative + " at " + job_.commit.substr(0, 12) +
                                        ": run `maxcode init` in the repository to write one (docs/configuration.md)" +
                                        (job_.input.config.empty() ? ", or name another with --config" : ""));
    try {
      config_ = load_config(config_file_);
    } catch (const std::exception& e) {
      throw JobFailure("config", e.what());
    }
    if (job_.input.policy) config_.search.policy = *job_.input.policy;
    if (!job_.input.replay_dir.empty()) config_.search.replay_dir = job_.input.replay_dir;
    if (!config_.search.replay_dir.empty()) keep_out_of_scope(config_.scope, "", config_.search.replay_dir);
    const std::string& replay_dir = config_.search.replay_dir;
    if (!replay_dir.empty() && (escapes_root(replay_dir) || !resolves_inside(source_dir(), source_dir() / replay_dir)))
      throw JobFailure("config", std::string(job_.input.replay_dir.empty() ? "search.replay_dir" : "replay_dir") +
                                     ": \"" + excerpt(replay_dir, 200) + "\" leads outside the repository");
    try {
      check_policy_inputs(config_, source_dir(), {}, run_.env);
    } catch (const std::exception& e) {
      throw JobFailure("config", relative + ": " + e.what());
    }
    progress_.note("config: " + relative + " (policy " + search_policy_name(config_.search.policy) + ")");
  }

  void choose_targets() {
    if (already_done_ || !job_.targets.empty()) return;  // a resumed job keeps its choice
    choose_job_targets({source_dir(), config_file_, config_, run_.out, run_.keep_workspaces}, job_, progress_);
    for (std::size_t i = 0; i < job_.targets.size(); ++i) {
      const TargetRecord& t = job_.targets[i];
      progress_.note("target " + std::to_string(i + 1) + "/" + std::to_string(job_.targets.size()) + ": " + t.function +
                     " (" + t.file + ":" + std::to_string(t.line) +
                     (t.share ? ", " + format_percent(*t.share) + " of the time" : "") + ")");
    }
    job_.budget = job_allowance(job_.input.budget, config_.search, static_cast<int>(job_.targets.size()));
    save();
  }

  static bool finished(const TargetRecord& t) {
    return t.status == TargetStatus::kDone || t.status == TargetStatus::kFailed || t.status == TargetStatus::kSkipped;
  }

  Allowance spent_so_far() const {
    Allowance spent;
    for (const TargetRecord& t : job_.targets)
      if (finished(t)) spent += t.spent;
    return spent;
  }

  // A sweep's night: every target's own time on the previous night's commit and on
  // this one, side by side, so that the history can tell a regression from a busier
  // machine (regression_check.h). One build per commit; one profile run measures all.
  void compare_commits() {
    const std::string& before = job_.input.compare_with;
    if (before.empty() || before == job_.commit || job_.targets.empty()) return;
    if (std::all_of(job_.targets.begin(), job_.targets.end(), [](const TargetRecord& t) { return t.check.has_value(); }))
      return;  // resumed after the check
    RegressionCheckRequest request;
    request.repository = source_dir();
    request.before_commit = before;
    request.config = job_.input.config.empty() ? ".maxcode.json" : job_.input.config;
    for (const TargetRecord& t : job_.targets) request.functions.push_back({t.function, t.file});
    request.work_dir = run_.out / "regression-check";
    progress_.note("regression check: " + std::to_string(job_.targets.size()) + " target(s) against " +
                   before.substr(0, 12) + ", side by side");
    const std::vector<RegressionCheck> checks = check_regressions(request, progress_);
    for (std::size_t i = 0; i < checks.size(); ++i) job_.targets[i].check = checks[i];
    save();
  }

  void search_targets() {
    if (already_done_) return;
    const int n = static_cast<int>(job_.targets.size());
    for (int i = 0; i < n; ++i) {
      TargetRecord& t = job_.targets[static_cast<std::size_t>(i)];
      const std::string label = "target " + std::to_string(i + 1) + "/" + std::to_string(n) + " " + t.function;
      if (!finished(t)) {
        if (stop_requested()) break;
        search_one(t, label);
        if (t.status == TargetStatus::kStopped) break;
      }
      deliver_one(t, label);
    }
  }

  void search_one(TargetRecord& t, const std::string& label) {
    const fs::path out = run_.out / "targets" / t.slug;
    std::optional<Checkpoint> checkpoint;
    if (fs::exists(out / "checkpoint.json")) {
      try {
        checkpoint = read_checkpoint(out);
      } catch (const std::exception& e) {
        progress_.note(label + ": checkpoint unreadable, starting over: " + e.what());
      }
    }
    // A resumed target keeps its part of the budget; the others share what is left.
    if (!(checkpoint && t.allowance.evaluations > 0)) {
      int left = 0;
      for (const TargetRecord& other : job_.targets) left += finished(other) ? 0 : 1;
      t.allowance = next_target_allowance(job_.budget, spent_so_far(), left);
    }
    if (const std::string why = why_nothing_left(t.allowance, job_.budget); !why.empty()) {
      t.status = TargetStatus::kSkipped;
      t.reason = why;
      t.no_pr = "not searched: " + why;
      progress_.note(label + ": skipped, " + why);
      save();
      return;
    }
    t.status = TargetStatus::kRunning;
    t.reason.clear();
    save();
    progress_.note(label + ": searching (" + std::to_string(t.allowance.evaluations) + " evaluation(s)" +
                   (checkpoint ? ", resuming at " + std::to_string(checkpoint->state.evaluations) : "") + ")");

    const TargetSearch search = search_request(t, checkpoint, out, label);
    try {
      const TargetSearchOutcome outcome = search_target(search, progress_);
      record_outcome(t, outcome, out);
    } catch (const NothingToTry& e) {
      t.status = TargetStatus::kSkipped;
      t.reason = e.what();
      t.no_pr = "not searched: " + t.reason;
      progress_.note(label + ": skipped, " + t.reason);
    } catch (const std::exception& e) {
      t.status = TargetStatus::kFailed;
      t.reason = e.what();
      t.no_pr = "the search failed";
      progress_.note(label + ": failed: " + t.reason);
    }
    save();
    if (t.status == TargetStatus::kStopped)
      progress_.note(label + ": stopped; resume with --resume " + run_.out.string());
    else if (t.status == TargetStatus::kDone)
      progress_.note(label + ": " + describe_verdict(t));
  }

  // What searching `t` takes: the job's config within the target's allowance, the
  // definition chosen, the entries it drives, where it writes, and the job's stop.
  TargetSearch search_request(const TargetRecord& t, const std::optional<Checkpoint>& checkpoint, const fs::path& out,
                              const std::string& label) {
    TargetSearch search;
    search.repo = source_dir();
    search.config = config_;
    search.config.search.max_evaluations = t.allowance.evaluations;
    search.config.search.max_wall_s = t.allowance.wall_s;
    search.config.search.max_tokens = t.allowance.tokens;
    search.config.search.max_dollars = t.allowance.dollars;
    search.max_timing_s = t.allowance.gpu_s;
    search.function = t.function;
    search.signature = t.signature;  // the definition chosen, where the name has several
    search.file = t.file;
    for (const std::string& note : time_driven_entries(search.config.benchmarks, t.benchmark_entries))
      progress_.note(label + ": " + note);
    search.out = out;
    if (!config_.search.replay_dir.empty()) search.replay_dir = source_dir() / config_.search.replay_dir;
    search.resume = checkpoint;
    search.keep_workspaces = run_.keep_workspaces;
    search.env = run_.env;
    search.stop_requested = [this] { return stop_requested(); };
    return search;
  }

  static std::string describe_verdict(const TargetRecord& t) {
    if (!t.speedup) return "no winner (" + t.reason + ")";
    char text[160];
    std::snprintf(text, sizeof text, "winner, %.3fx faster (95%% CI %.3f-%.3f, confirmed)", t.speedup->median,
                  t.speedup->low, t.speedup->high);
    return text;
  }

  void record_outcome(TargetRecord& t, const TargetSearchOutcome& outcome, const fs::path& out) {
    const SearchResult& r = outcome.result;
    if (outcome.info.noise) {
      t.original_s = outcome.info.noise->baseline_median_s;
      t.original_rounds = outcome.info.noise->baseline_s;
    }
    t.spent.evaluations = r.evaluations;
    t.spent.wall_s += r.wall_s;
    t.spent.tokens = r.spend.value("tokens", 0L);
    t.spent.dollars = r.spend.value("dollars", 0.0);
    t.spent.gpu_s = r.spend.value("timing_s", 0.0);
    write_text(out / "progress.svg", render_progress_svg(r));
    if (r.stopped) {
      t.status = TargetStatus::kStopped;
      t.reason = "stopped by request";
      return;
    }
    if (r.fatal) {
      t.status = TargetStatus::kFailed;
      t.reason = *r.fatal;
      t.no_pr = "the search failed";
      return;
    }
    t.status = TargetStatus::kDone;
    if (r.winner) {
      t.verdict = TargetVerdict::kWinner;
      t.speedup = r.winner->confirmed.speedup;
      t.reason = r.winner->id;
    } else {
      t.verdict = TargetVerdict::kNoWinner;
      t.reason = r.unconfirmed ? *r.unconfirmed : r.stop_reason;
      t.no_pr = "no winner";
    }
  }

  void deliver_one(TargetRecord& t, const std::string& label) {
    if (t.status != TargetStatus::kDone || t.verdict != TargetVerdict::kWinner || t.pr || !t.no_pr.empty()) return;
    const fs::path out = run_.out / "targets" / t.slug;
    if (job_.input.delivery.mode == DeliveryMode::kNone) {
      t.no_pr = "delivery: none (the result is in targets/" + t.slug + ")";
    } else if (!run_.delivery) {
      t.no_pr = "delivery failed: no delivery configured";
      any_delivery_failed_ = true;
    } else {
      try {
        t.pr = run_.delivery->deliver(out);
        progress_.note(label + ": pr: " + t.pr->message);
      } catch (const std::exception& e) {
        t.no_pr = std::string("delivery failed: ") + e.what();
        any_delivery_failed_ = true;
        progress_.note(label + ": " + t.no_pr);
      }
    }
    save();
  }

  void finish() {
    if (already_done_) return;
    job_.spent = Allowance{};
    for (const TargetRecord& t : job_.targets) job_.spent += t.spent;
    const bool stopped = stop_requested() || job_.targets.empty() ||
                         std::any_of(job_.targets.begin(), job_.targets.end(),
                                     [](const TargetRecord& t) { return !finished(t); });
    const bool failed =
        any_delivery_failed_ || std::any_of(job_.targets.begin(), job_.targets.end(), [](const TargetRecord& t) {
          return t.status == TargetStatus::kFailed || t.no_pr.rfind("delivery failed", 0) == 0;
        });
    job_.status = stopped ? JobStatus::kStopped : JobStatus::kCompleted;
    job_.exit_code = stopped ? kJobStopped : failed ? kJobPartlyFailed : kJobCompleted;
    job_.finished_at = utc_now();
    save();
  }

  const JobRun& run_;
  Progress& progress_;
  JobRecord job_;
  fs::path config_file_;
  Config config_;
  bool already_done_ = false;  // a resumed job that had already ended
  bool any_delivery_failed_ = false;
};

}  // namespace

JobRecord run_job(const JobRun& run, Progress& progress) { return JobRunner(run, progress).go(); }

}  // namespace maxcode
