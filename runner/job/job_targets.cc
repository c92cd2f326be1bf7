#include "runner/job/job_targets.h"

#include <algorithm>

#include "runner/job/job_failure.h"
#include "runner/profile/benchmark_entries.h"
#include "runner/profile/profile_run.h"
#include "runner/profile/select.h"
#include "runner/util/files.h"
#include "runner/util/format.h"
#include "runner/util/json_io.h"
#include "runner/workspace/locate.h"

namespace maxcode {

namespace {

// Fills a job's targets and the top of its profile, for one job's request.
class JobTargets {
 public:
  JobTargets(const JobTargetsRequest& request, JobRecord& job, Progress& progress)
      : req_(request), job_(job), progress_(progress) {}

  void choose() {
    if (!job_.input.targets.empty())
      add_named_targets();
    else
      add_profiled_targets();
  }

 private:
  void add_target(const Located& located, const ProfileEntry* entry) {
    TargetRecord t;
    t.function = located.target.function;
    t.signature = located.target.signature;
    t.file = located.target.file;
    t.line = static_cast<int>(located.target.line_begin);
    t.slug = target_slug(t.file, t.function);
    if (entry) {
      t.share = entry->share;
      t.self_ns = entry->self;
      t.samples = entry->samples;
      t.benchmark_entries = entry->benchmark_entries;
    }
    job_.targets.push_back(t);
  }

  // The benchmarks profiled in the job's checkout, written to profile.json.
  Profile run_profile() {
    ProfileOptions options;
    options.repo = req_.source_dir;
    options.config = req_.config_file;
    options.quiet = true;
    options.keep_workspaces = req_.keep_workspaces;
    Profile profile;
    try {
      profile = profile_benchmarks(options, req_.config, progress_);
    } catch (const std::exception& e) {
      throw JobFailure("profile", std::string("profiling failed: ") + e.what());
    }
    write_text(req_.out / "profile.json", dump_json(to_json(profile), 2) + "\n");
    return profile;
  }

  // The functions the input names, each located in the scope.
  void add_named_targets() {
    for (const std::string& function : job_.input.targets) {
      try {
        add_target(locate_target(req_.source_dir, req_.config.scope, function, req_.config.targets.signature), nullptr);
      } catch (const std::exception& e) {
        throw JobFailure("nothing-in-scope", "target " + function + ": " + e.what());
      }
    }
    // A Google Benchmark program: each named target is timed on the entries it
    // drives, as a profiled one is; one profile says which for all of them.
    if (!wants_benchmark_entries(req_.config)) return;
    progress_.note("profile: running the benchmarks to see which Google Benchmark entries the targets drive");
    const Profile profile = run_profile();
    for (TargetRecord& t : job_.targets) {
      if (auto entries = driven_entries(profile, t.function))
        t.benchmark_entries = std::move(*entries);
      else
        progress_.note("profile: " + t.function + " did not show in the profile: every entry is timed");
    }
  }

  // The profile's hottest entries in scope, up to max_targets; job_.json keeps the top of
  // the profile and why each hot entry left out is not a target.
  void add_profiled_targets() {
    progress_.note("profile: building and running the benchmarks under the profiler");
    const Profile profile = run_profile();
    record_profile_top(profile);
    std::string tried;
    for (const ProfileEntry& e : select_targets(profile, 50, job_.input.min_share, req_.config.targets.prefer)) {
      if (static_cast<int>(job_.targets.size()) >= job_.input.max_targets) break;
      try {
        // A kernel's target is its launcher (runner/profile/select.h).
        const TargetChoice choice = resolve_target(req_.source_dir, req_.config.scope, e);
        const bool seen = std::any_of(job_.targets.begin(), job_.targets.end(),
                                      [&](const TargetRecord& t) { return t.function == choice.function; });
        if (seen) continue;
        add_target(locate_target(req_.source_dir, req_.config.scope, choice.function, choice.signature, choice.file),
                   &e);
      } catch (const std::exception& error) {
        tried += "; " + e.function + ": " + error.what();
        // job_.json says why a hot entry is not a target (it was silent: the second
        // hottest function of a real library was left out with no reason anywhere).
        for (nlohmann::json& p : job_.profile)
          if (p.value("function", "") == e.function && p.value("kind", "") == e.kind) p["not_a_target"] = error.what();
        progress_.note("profile: " + e.function + " is not a target: " + error.what());
      }
    }
    if (job_.targets.empty()) throw nothing_in_scope(profile, tried);
  }

  void record_profile_top(const Profile& profile) {
    for (const auto* list : {&profile.kernels, &profile.functions}) {
      for (std::size_t i = 0; i < list->size() && i < 10; ++i) {
        const ProfileEntry& e = (*list)[i];
        std::string launched_by;
        for (const KernelLauncher& l : e.launchers) launched_by += (launched_by.empty() ? "" : ", ") + l.function;
        job_.profile.push_back({{"kind", e.kind},
                                {"name", e.name},
                                {"function", e.function},
                                {"file", e.file},
                                {"line", e.line},
                                {"share", e.share},
                                {"self", e.self},
                                {"samples", e.samples},
                                {"in_scope", e.in_scope},
                                {"external", e.external},
                                {"launched_by", launched_by}});
      }
    }
  }

  // No target: the hottest entries and why each was not one.
  JobFailure nothing_in_scope(const Profile& profile, const std::string& tried) const {
    std::string hottest;
    for (const auto* list : {&profile.kernels, &profile.functions}) {
      for (std::size_t i = 0; i < list->size() && i < 3; ++i) {
        const ProfileEntry& e = (*list)[i];
        hottest += (hottest.empty() ? "" : ", ") + format_percent(e.share) + " of " +
                   (e.kind == "gpu" ? "GPU" : "CPU") + " time " + e.name +
                   (e.external    ? " (external)"
                    : !e.in_scope ? " (out of scope)"
                                  : "");
      }
    }
    return JobFailure("nothing-in-scope", "no function inside the scope of " + req_.config_file.filename().string() +
                                              " takes " + format_percent(job_.input.min_share) +
                                              " or more of its profile list's time" +
                                              (hottest.empty() ? "" : " (hottest: " + hottest + ")") + tried);
  }

  const JobTargetsRequest& req_;
  JobRecord& job_;
  Progress& progress_;
};

}  // namespace

void choose_job_targets(const JobTargetsRequest& request, JobRecord& job, Progress& progress) {
  JobTargets(request, job, progress).choose();
}

}  // namespace maxcode
