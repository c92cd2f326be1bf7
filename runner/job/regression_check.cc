#include "runner/job/regression_check.h"

#include <algorithm>

#include "runner/profile/profile_run.h"
#include "runner/util/files.h"
#include "runner/util/stats.h"
#include "runner/workspace/clone.h"
#include "runner/workspace/workspace.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// The function's own time in one profile run; 0 when it does not appear (inlined away,
// or too short to be sampled).
double own_time(const Profile& profile, const std::string& function, const std::string& file) {
  for (const ProfileEntry& e : profile.functions)
    if (e.function == function && (file.empty() || e.file == file)) return e.self;
  return 0;
}

}  // namespace

void decide_regression(RegressionCheck& check) {
  check.rounds = static_cast<int>(std::min(check.before_ns.size(), check.after_ns.size()));
  // A side with no sample in a round (0: the function ran too briefly to be sampled) still
  // says which side was slower, but gives no ratio: the growth rests on the rounds
  // sampled on both sides.
  std::vector<double> after, before;
  for (int i = 0; i < check.rounds; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (check.after_ns[k] > 0 && check.before_ns[k] > 0) {
      after.push_back(check.after_ns[k]);
      before.push_back(check.before_ns[k]);
    }
  }
  if (after.empty()) {
    if (check.note.empty()) check.note = "the function was not sampled on both commits in any round";
    check.rounds = 0;
    return;
  }
  check.note.clear();  // a round unsampled on both sides, if any, is no reason now
  // paired_ratio_interval(b, c) is the median of b_i / c_i: with b = after and c =
  // before, the growth of the own time.
  const RatioInterval growth = paired_ratio_interval(after, before);
  check.growth = growth.median;
  check.low = growth.low;
  check.high = growth.high;
  bool every_round_slower = true;
  for (int i = 0; i < check.rounds; ++i)
    every_round_slower = every_round_slower && check.after_ns[static_cast<std::size_t>(i)] >
                                                    check.before_ns[static_cast<std::size_t>(i)];
  check.confirmed = every_round_slower;
}

namespace {

// Both commits built for profiling, each with its own config.
struct BothCommits {
  Config before_config, after_config;
  BuiltCopy before, after;
};

BothCommits build_both(const RegressionCheckRequest& request, const fs::path& work, Progress& progress) {
  fs::create_directories(work);
  CloneRequest clone;
  clone.url = request.repository.string();
  clone.ref = request.before_commit;
  clone.destination = work / "before-source";
  clone_at_ref(clone);

  // Each commit with its own config (a benchmark added or renamed since is theirs);
  // the previous commit without one is measured with this night's.
  BothCommits both;
  both.after_config = load_config(request.repository / request.config);
  const fs::path before_file = clone.destination / request.config;
  both.before_config = fs::exists(before_file) ? load_config(before_file) : both.after_config;

  ProfileOptions options;
  options.quiet = true;
  options.repo = clone.destination;
  progress.note("regression check: building " + request.before_commit.substr(0, 10) + " (the night before)");
  both.before = build_for_profiling(options, both.before_config, work / "before", progress);
  options.repo = request.repository;
  progress.note("regression check: building this night's commit");
  both.after = build_for_profiling(options, both.after_config, work / "after", progress);
  return both;
}

// The functions' own times, round by round, the two commits in alternating order (a
// drift favours neither); a function sampled on neither side in a round gets a note.
void measure_rounds(const RegressionCheckRequest& request, const BothCommits& both,
                    std::vector<RegressionCheck>& checks, Progress& progress) {
  ProfileOptions options;
  options.quiet = true;
  options.build = false;
  auto measure = [&](const BuiltCopy& copy, const Config& config) {
    options.repo = copy.root;
    const Profile profile = profile_benchmarks(options, config, progress);
    std::vector<double> times;
    for (const CheckedFunction& f : request.functions) times.push_back(own_time(profile, f.function, f.file));
    return times;
  };
  for (int i = 0; i < request.rounds; ++i) {
    progress.status("regression check: round " + std::to_string(i + 1) + " of " + std::to_string(request.rounds));
    std::vector<double> b, a;
    if (i % 2 == 0) {
      b = measure(both.before, both.before_config);
      a = measure(both.after, both.after_config);
    } else {
      a = measure(both.after, both.after_config);
      b = measure(both.before, both.before_config);
    }
    for (std::size_t k = 0; k < checks.size(); ++k) {
      RegressionCheck& c = checks[k];
      if (a[k] <= 0 && b[k] <= 0) {
        c.note = request.functions[k].function + " was not sampled in round " + std::to_string(i + 1) +
                 " on either commit (it ran too briefly, or under another name)";
        continue;
      }
      // One side unsampled: kept as 0, which decide_regression reads as "shorter".
      c.before_ns.push_back(b[k]);
      c.after_ns.push_back(a[k]);
    }
  }
}

}  // namespace

std::vector<RegressionCheck> check_regressions(const RegressionCheckRequest& request, Progress& progress) {
  const std::size_t n = request.functions.size();
  std::vector<RegressionCheck> checks(n);
  const fs::path work = request.work_dir;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      if (!dir.empty()) remove_workspace(dir);
    }
  } cleanup{work};
  std::string failure;
  try {
    measure_rounds(request, build_both(request, work, progress), checks, progress);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  for (std::size_t k = 0; k < n; ++k) {
    RegressionCheck& c = checks[k];
    if (!failure.empty()) {
      c = RegressionCheck{};
      c.note = failure;
    }
    decide_regression(c);
    if (c.rounds == 0)
      progress.note("regression check of " + request.functions[k].function + " not made: " + c.note);
  }
  return checks;
}

}  // namespace maxcode
