// `maxcode sweep`: the nightly sweep over many jobs, its history and trend page
// (runner/job/sweep.h).
#include <iostream>

#include "cli/bot_delivery.h"
#include "cli/subcommand.h"
#include "runner/job/job_report.h"
#include "runner/job/sweep.h"

namespace maxcode::cli {
namespace {

namespace fs = std::filesystem;

class Sweep : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        "sweep", "the nightly sweep: run the jobs of SWEEP.json one after another within a total budget, record "
                 "each night in the history store, draw the trend page and flag regressions (docs/job.md)");
    cmd->add_option("SWEEP", sweep_file_, "the sweep's input document")->check(CLI::ExistingFile);
    cmd->add_option("--night", night_, "the night's date, YYYY-MM-DD (default: SWEEP.json's, else today in UTC)");
    cmd->add_flag("--report", report_, "draw the trend page from the history only; run nothing");
    cmd->add_option("--history", history_, "history store (default: SWEEP.json's)");
    cmd->add_option("--out", page_, "with --report: the trend page to write (default: trend.html)");
    cmd->add_option("--min-growth", min_growth_, "growth of a function's own time that counts as a regression")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--min-z", min_z_, "standard errors of the profile's sampling a regression must clear (default: 3)")
        ->check(CLI::PositiveNumber);
    cmd->add_flag("-q,--quiet", quiet_, "no progress lines");
    return cmd;
  }

  int run() override {
    Progress progress(stderr, quiet_);
    try {
      SweepInput input;
      if (!sweep_file_.empty()) input = load_sweep_input(sweep_file_);
      if (!history_.empty()) input.history = history_;
      if (min_growth_ > 0) input.rule.min_growth = min_growth_;
      if (min_z_ > 0) input.rule.min_z = min_z_;
      if (report_) {
        if (input.history.empty()) throw JobInputError("--report needs --history FILE or SWEEP.json");
        const fs::path page = page_.empty() ? fs::path("trend.html") : page_;
        const auto regressions = write_trend_page(input.history, page, input.rule);
        for (const Regression& r : regressions) print_regression(r);
        std::cout << "wrote " << page.string() << " (" << regressions.size() << " regression(s))\n";
        return 0;
      }
      if (sweep_file_.empty()) throw JobInputError("no SWEEP.json given (or --report to draw the trend page)");
      if (!night_.empty()) input.night = night_;
      SweepRun run;
      run.input = input;
      run.ssh_key = env_value("MAXCODE_SSH_KEY");
      run.git_token = git_token_from_env(input.jobs.front().git_token_env);
      run.make_delivery = [](const JobInput& job) -> std::unique_ptr<Delivery> {
        if (job.delivery.mode == DeliveryMode::kNone) return nullptr;
        return std::make_unique<BotDelivery>(job.delivery);
      };
      run.stop = stop_on_signals();
      const SweepResult result = run_sweep(run, progress);
      for (const SweepJob& job : result.jobs) {
        std::cout << "== " << job.repository << " (" << job.out.string() << ")\n" << render_job_summary(job.record);
      }
      for (const Regression& r : result.regressions) print_regression(r);
      std::cout << "wrote " << result.trend_page.string() << "; history in " << input.history.string() << "\n";
      return result.exit_code;
    } catch (const JobInputError& e) {
      std::cerr << "maxcode sweep: error: " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "maxcode sweep: error: " << e.what() << "\n";
      return 1;
    }
  }

 private:
  static void print_regression(const Regression& r) {
    char line[512];
    std::snprintf(line, sizeof line, "REGRESSION %s %s (%s): own time %.2fx from %s to %s (%s)\n",
                  r.repository.c_str(), r.target.c_str(), r.file.c_str(), r.growth, r.previous_night.c_str(),
                  r.night.c_str(), regression_evidence(r).c_str());
    std::cout << line;
    for (const std::string& c : r.commits) std::cout << "  " << c << "\n";
  }

  fs::path sweep_file_, history_, page_;
  std::string night_;
  double min_growth_ = 0, min_z_ = 0;
  bool report_ = false, quiet_ = false;
};

}  // namespace

std::unique_ptr<Subcommand> sweep_command() { return std::make_unique<Sweep>(); }

}  // namespace maxcode::cli
