#include "runner/profile/select.h"
#include "runner/util/format.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "runner/profile/overload.h"
#include "runner/profile/profile_run.h"
#include "runner/util/progress.h"
#include "runner/workspace/locate.h"

namespace maxcode {

namespace {

bool selectable(const ProfileEntry& e, double min_share) {
  return e.share >= min_share && !e.external && e.in_scope && !e.function.empty();
}

std::string of_list(const ProfileEntry& e) {
  if (!e.benchmark_entries.empty())  // weighed by the metric (runner/profile/benchmark_entries.h)
    return format_percent(e.share) + " of the metric (the Google Benchmark entries' times per iteration)";
  return format_percent(e.share) + " of " + (e.kind == "gpu" ? "GPU" : "CPU") + " time";
}

Profile profile_for_choice(const std::filesystem::path& repo, const std::filesystem::path& config_file,
                           const Config& config, bool quiet, Progress& progress, const std::string& why) {
  progress.note(why);
  ProfileOptions options;
  options.repo = repo;
  options.config = config_file;
  options.quiet = quiet;
  try {
    return profile_benchmarks(options, config, progress);
  } catch (const std::exception& e) {
    throw ConfigError(config_file.string() + ": targets.functions: " + why + ", and profiling failed: " + e.what());
  }
}

}  // namespace

std::vector<ProfileEntry> select_targets(const Profile& profile, int top, double min_share,
                                         const std::string& prefer) {
  std::vector<ProfileEntry> kernels, functions;
  for (const ProfileEntry& e : profile.kernels)
    if (selectable(e, min_share)) kernels.push_back(e);
  for (const ProfileEntry& e : profile.functions)
    if (selectable(e, min_share)) functions.push_back(e);
  std::vector<ProfileEntry> out;
  if (prefer == "gpu" || prefer == "cpu") {
    out = prefer == "gpu" ? kernels : functions;
    const auto& rest = prefer == "gpu" ? functions : kernels;
    out.insert(out.end(), rest.begin(), rest.end());
  } else {
    out = kernels;
    out.insert(out.end(), functions.begin(), functions.end());
    std::stable_sort(out.begin(), out.end(), [](const ProfileEntry& a, const ProfileEntry& b) { return a.share > b.share; });
  }
  if (static_cast<int>(out.size()) > top) out.resize(static_cast<std::size_t>(top));
  return out;
}

namespace {

// The host function that launches a hot kernel, which becomes the target with it: the
// one launcher in scope, in the kernel's file. Throws SourceError saying what to set
// when there is none, or several.
struct Launcher {
  std::string function, signature;
  std::string why;  // for the choice's note
};

Launcher kernel_launcher(const std::filesystem::path& repo, const ScopeConfig& scope, const ProfileEntry& e) {
  const std::string place = e.file.empty() ? "definition not found"
                            : e.line > 0   ? e.file + ":" + std::to_string(e.line)
                                           : e.file;
  const std::string kernel = "kernel " + e.function + " (" + place + ", " + of_list(e) + ")";
  if (e.launchers.empty())
    throw SourceError(kernel + " has no launcher maxcode can read: " + e.launch_note +
                      "; name the host function to optimize with targets.functions (or --function)");
  std::vector<const KernelLauncher*> distinct;
  for (const KernelLauncher& l : e.launchers) {
    const bool seen = std::any_of(distinct.begin(), distinct.end(), [&](const KernelLauncher* d) {
      return d->function == l.function && d->signature == l.signature && d->file == l.file;
    });
    if (!seen) distinct.push_back(&l);
  }
  // Launchers outside the scope (copies in replay/ or tests/, callers in tools) cannot
  // be targets; when one launcher in scope remains, it is the target.
  std::size_t outside = 0;
  if (distinct.size() > 1) {
    std::vector<const KernelLauncher*> inside;
    for (const KernelLauncher* l : distinct) {
      const auto found = locate_definitions(repo, scope, l->function, l->signature);
      const bool here =
          std::any_of(found.begin(), found.end(), [&](const Located& d) { return d.target.file == l->file; });
      if (here) inside.push_back(l);
    }
    if (!inside.empty()) {
      outside = distinct.size() - inside.size();
      distinct = inside;
    }
  }
  if (distinct.size() > 1) {
    std::string list;
    for (const KernelLauncher* l : distinct)
      list += "\n  " + l->function + " (" + l->file + ":" + std::to_string(l->line) + ")";
    throw SourceError(kernel + " is launched from " + std::to_string(distinct.size()) +
                      " host functions, and a target is one launcher with its kernel:" + list +
                      "\nchoose one with targets.functions in the config (or --function)");
  }
  const KernelLauncher& l = *distinct.front();
  if (l.file != e.file)
    throw SourceError(kernel + " is launched by " + l.function + " in another file (" + l.file + ":" +
                      std::to_string(l.line) +
                      "), and a target unit stays in one file; move the launcher next "
                      "to the kernel, or name a function of one file with targets.functions (or --function)");
  if (locate_definitions(repo, scope, l.function, l.signature).empty())
    throw SourceError(kernel + " is launched by " + l.function + " (" + l.file + ":" + std::to_string(l.line) +
                      "), which is outside the configured scope; widen scope.include or name another "
                      "function with targets.functions");
  std::string why = "launcher of " + e.function + ", which takes " + of_list(e);
  if (outside > 0) why += " (" + std::to_string(outside) + " more launcher(s) outside the scope left aside)";
  return {l.function, l.signature, why};
}

// The one definition of `choice.function` the profile entry means: by the profile's
// file where the name is defined in several (per-architecture copies), else by the
// launcher's signature or the overload the symbol names. Sets choice.signature where it
// picked one and says how in `why`.
Located pick_definition(const std::filesystem::path& repo, const ScopeConfig& scope, const ProfileEntry& e,
                        const std::string& signature, TargetChoice& choice, std::string& why) {
  std::vector<Located> definitions = locate_definitions(repo, scope, choice.function);
  std::vector<std::size_t> in_profile_file;
  for (std::size_t i = 0; i < definitions.size(); ++i)
    if (!e.file.empty() && definitions[i].target.file == e.file) in_profile_file.push_back(i);
  if (definitions.size() > 1 && in_profile_file.size() == 1) {
    // Same name (and often the same signature) in several files, as per-architecture
    // copies of a `static inline` helper are: the profile's symbol says which file.
    const std::size_t index = in_profile_file.front();
    why += "; of its " + std::to_string(definitions.size()) + " definitions, the profile's " + e.name +
           " is the one in " + e.file;
    choice.signature = definitions[index].extent.signature;
    definitions = {definitions[index]};
  } else if (definitions.size() > 1) {
    std::optional<std::size_t> index;
    if (!signature.empty()) {
      for (std::size_t i = 0; i < definitions.size(); ++i)
        if (definitions[i].extent.signature == signature) index = i;
    } else {
      index = match_overload(definitions, e);
    }
    if (!index) locate_target(repo, scope, choice.function);  // throws, listing the definitions
    choice.signature = definitions[*index].extent.signature;
    definitions = {definitions[*index]};
    why += "; of its " + std::to_string(locate_definitions(repo, scope, choice.function).size()) +
           " definitions, the profile's " + e.name + " is this one";
  }
  return definitions.empty() ? locate_target(repo, scope, choice.function) : definitions.front();
}

}  // namespace

TargetChoice resolve_target(const std::filesystem::path& repo, const ScopeConfig& scope, const ProfileEntry& e) {
  TargetChoice choice;
  std::string why;
  std::string signature;
  if (e.kind == "gpu") {
    Launcher launcher = kernel_launcher(repo, scope, e);
    choice.function = launcher.function;
    signature = launcher.signature;
    why = launcher.why;
  } else {
    choice.function = e.function;
    choice.benchmark_entries = e.benchmark_entries;
    why = of_list(e);
  }
  const Located located = pick_definition(repo, scope, e, signature, choice, why);
  choice.file = located.target.file;
  choice.line = static_cast<int>(located.target.line_begin);
  choice.note = "chose " + choice.function + " (" + choice.file + ":" + std::to_string(choice.line) + "), " + why;
  return choice;
}

TargetChoice choose_target_by_profile(const std::filesystem::path& repo, const std::filesystem::path& config_file,
                                      const Config& config, bool quiet) {
  Progress progress(stderr, quiet);
  const Profile profile =
      profile_for_choice(repo, config_file, config, quiet, progress, "no function named: profiling the benchmarks to choose one");
  std::string tried;
  for (const ProfileEntry& e : select_targets(profile, 5, kDefaultTargetShare, config.targets.prefer)) {
    try {
      TargetChoice choice = resolve_target(repo, config.scope, e);
      progress.note(choice.note);
      return choice;
    } catch (const std::exception& error) {
      progress.note(std::string("skipped: ") + error.what());
      tried += "\n  " + e.function + ": " + error.what();
    }
  }
  std::string hottest;
  for (const auto* list : {&profile.kernels, &profile.functions}) {
    for (std::size_t i = 0; i < list->size() && i < 3; ++i) {
      const ProfileEntry& e = (*list)[i];
      hottest += "\n  " + of_list(e) + " " + e.name + (e.external ? " (external)" : !e.in_scope ? " (out of scope)" : "");
    }
  }
  throw ConfigError(config_file.string() + ": targets.functions: no function named, and no function or kernel in scope "
                    "takes " + std::to_string(static_cast<int>(kDefaultTargetShare * 100)) +
                    "% or more of its list's time and resolves to a target; give one with --function" +
                    (tried.empty() ? "" : "\n candidates skipped:" + tried) +
                    (hottest.empty() ? "" : "\n hottest entries:" + hottest));
}

std::string signature_from_profile(const std::filesystem::path& repo, const std::filesystem::path& config_file,
                                   const Config& config, const std::string& function, bool quiet) {
  const std::vector<Located> definitions = locate_definitions(repo, config.scope, function);
  // Copies of one definition (a build tree's copy of the source) are no overloads: a
  // signature cannot tell them apart, and the workspace leaves the copies out.
  std::vector<std::string> signatures;
  for (const Located& l : definitions)
    if (std::find(signatures.begin(), signatures.end(), l.extent.signature) == signatures.end())
      signatures.push_back(l.extent.signature);
  if (signatures.size() < 2) return "";
  Progress progress(stderr, quiet);
  const Profile profile = profile_for_choice(
      repo, config_file, config, quiet, progress,
      function + " has " + std::to_string(definitions.size()) + " definitions: profiling to see which one is hot");
  const auto pick = pick_overload(definitions, profile, function);
  if (!pick) {
    // Locating the target then fails as before, listing the definitions.
    progress.note("the profile does not say which definition of " + function + " runs (it did not run, or its "
                  "entries fit several definitions)");
    return "";
  }
  progress.note(pick->note);
  return definitions[pick->index].extent.signature;
}

bool wants_benchmark_entries(const Config& config) {
  return std::any_of(config.benchmarks.begin(), config.benchmarks.end(),
                     [](const BenchmarkConfig& b) { return b.metric == "google-benchmark" && b.filter.empty(); });
}

std::optional<std::map<std::string, std::vector<std::string>>> driven_entries(const Profile& profile,
                                                                              const std::string& function) {
  std::map<std::string, std::set<std::string>> found;
  // "f" names "ns::f" too, as --function does.
  auto names = [&function](const std::string& qualified) {
    if (qualified == function) return true;
    const std::size_t n = function.size();
    return function.find("::") == std::string::npos && qualified.size() > n + 2 &&
           qualified.compare(qualified.size() - n - 2, n + 2, "::" + function) == 0;
  };
  for (const ProfileEntry& e : profile.functions)
    if (names(e.function))
      for (const auto& [bench, entries] : e.benchmark_entries) found[bench].insert(entries.begin(), entries.end());
  if (found.empty()) return std::nullopt;
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [bench, entries] : found) out[bench].assign(entries.begin(), entries.end());
  return out;
}

std::map<std::string, std::vector<std::string>> entries_from_profile(const std::filesystem::path& repo,
                                                                     const std::filesystem::path& config_file,
                                                                     const Config& config, const std::string& function,
                                                                     bool quiet) {
  if (!wants_benchmark_entries(config)) return {};
  Progress progress(stderr, quiet);
  const Profile profile =
      profile_for_choice(repo, config_file, config, quiet, progress,
                         "profiling the benchmarks to see which Google Benchmark entries " + function + " drives");
  auto entries = driven_entries(profile, function);
  if (!entries)
    progress.note(function + " did not show in the profile of the Google Benchmark entries: every entry is timed");
  return entries.value_or(std::map<std::string, std::vector<std::string>>{});
}

}  // namespace maxcode
