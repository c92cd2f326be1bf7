#include "runner/job/init_config.h"
#include "runner/util/json_io.h"

#include <algorithm>
#include <set>

namespace maxcode {

using nlohmann::ordered_json;

namespace {

std::string quoted(const std::string& s) { return dump_json(ordered_json(s)); }

// `{"a": 1, "b": ["x", "y"]}`: one line, spaced as people write it.
std::string inline_json(const ordered_json& value) {
  if (value.is_object()) {
    std::string out = "{";
    for (auto it = value.begin(); it != value.end(); ++it)
      out += (it == value.begin() ? "" : ", ") + quoted(it.key()) + ": " + inline_json(it.value());
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + inline_json(value[i]);
    return out + "]";
  }
  return dump_json(value);
}

ordered_json benchmark_entry(const ScannedBenchmark& b) {
  ordered_json entry;
  entry["name"] = b.name;
  entry["command"] = "./" + b.binary;
  if (b.cuda) {
    // CUPTI sees every kernel on every stream, whatever the framework prints.
    entry["metric"] = "kernels";
    if (b.framework != "plain") entry["compare_output"] = false;
  } else if (b.framework == "google-benchmark") {
    entry["metric"] = "google-benchmark";
  } else {
    entry["metric"] = "wall";
  }
  return entry;
}

void add(ProposedConfig& c, const std::string& key, ordered_json value, std::vector<std::string> comments) {
  c.fields.emplace_back(key, std::move(value));
  c.comments.push_back(std::move(comments));
}

// How to build: CMake (with its presets), or a Makefile; options the benchmarks sit
// behind are turned on.
void propose_build(const ProjectScan& scan, ProposedConfig& c) {
  ordered_json build;
  std::string build_why;
  if (scan.cmake && !scan.preset.empty()) {
    build["configure"] = "cmake --preset " + scan.preset;
    build["command"] = scan.build_preset.empty() ? "cmake --build " + scan.binary_dir + " -j"
                                                 : "cmake --build --preset " + scan.build_preset;
    build_why = "CMakeLists.txt with CMakePresets.json (configure preset '" + scan.preset + "', build in " +
                scan.binary_dir + ").";
  } else if (scan.cmake) {
    build["configure"] = "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release";
    build["command"] = "cmake --build build -j";
    build_why = "CMakeLists.txt, no presets: a Release build in build/.";
  } else if (scan.meson) {
    build["configure"] = "meson setup build --buildtype=release";
    build["command"] = "meson compile -C build";
    build_why = "meson.build: a release build in build/.";
  } else {
    // The default goal may leave the benchmarks out: they are made by name after it.
    std::string made;
    for (const ScannedBenchmark& b : scan.benchmarks)
      if (!b.make_target.empty()) made += " " + b.make_target;
    build["command"] = made.empty() ? "make -j" : "make -j && make -j" + made;
    build_why = made.empty() ? "a Makefile." : "a Makefile; its default goal, then the benchmark rule(s)" + made + ".";
  }
  // Options the benchmarks are built behind, off by default: turned on here, or the
  // benchmark would never be built.
  std::vector<std::string> turned_on;
  for (const ScannedBenchmark& b : scan.benchmarks)
    for (const std::string& o : b.cmake_options)
      if (std::find(turned_on.begin(), turned_on.end(), o) == turned_on.end()) turned_on.push_back(o);
  if (scan.cmake && !turned_on.empty()) {
    std::string flags, names;
    for (const std::string& o : turned_on) {
      flags += " -D" + o + "=ON";
      names += (names.empty() ? "" : ", ") + o;
    }
    build["configure"] = build["configure"].get<std::string>() + flags;
    build_why += " The benchmarks are built only with " + names + " on (option() defaults off), so the configure "
                 "step turns " + (turned_on.size() == 1 ? "it" : "them") + " on.";
  }
  std::string meson_flags;
  for (const ScannedBenchmark& b : scan.benchmarks)
    for (const std::string& flag : b.meson_options)
      if (meson_flags.find(" " + flag) == std::string::npos) meson_flags += " " + flag;
  if (scan.meson && !meson_flags.empty()) {
    build["configure"] = build["configure"].get<std::string>() + meson_flags;
    build_why += " The benchmarks are built only with" + meson_flags +
                 " (options off by default in meson.options), so the configure step sets them.";
  }
  add(c, "build", build,
      {"How to build: found " + build_why, "Every candidate is built in its own copy of the repository."});
}

// The tests every candidate must pass: the Makefile's rule, ctest, or none found.
void propose_test(const ProjectScan& scan, ProposedConfig& c) {
  ordered_json test;
  std::vector<std::string> test_why;
  if (scan.meson && scan.meson_tests) {
    test["command"] = "meson test -C build";
    test_why = {"Tests: meson test (the test() calls in the meson.build files).", "Every candidate must pass them."};
  } else if (!scan.cmake && !scan.make_test_target.empty()) {
    test["command"] = "make " + scan.make_test_target;
    test_why = {"Tests: the Makefile's `" + scan.make_test_target + "` rule.", "Every candidate must pass them."};
  } else if (scan.ctest) {
    test["command"] = scan.test_preset.empty() ? "ctest --test-dir " + scan.binary_dir + " --output-on-failure"
                                               : "ctest --preset " + scan.test_preset + " --output-on-failure";
    test_why = {"Tests: ctest (enable_testing() and add_test/gtest_discover_tests in the CMake files).",
                "Every candidate must pass them."};
  } else {
    test["command"] = "true";
    test_why = {"DECIDE: no tests found (" +
                    std::string(scan.meson ? "no test() in the meson.build files" : "no ctest tests") +
                    std::string(scan.test_dirs.empty() ? "" : "; " + scan.test_dirs.front() + "/ is not registered") +
                    "). \"true\" passes every candidate:",
                "correctness then rests on the benchmark's printed output alone."};
    c.decisions.push_back(std::string("No tests were found, so test.command is \"true\": register the tests with ") +
                          (scan.meson ? "test() in meson.build" : "ctest (enable_testing(), add_test)") +
                          " or name a command that runs them.");
  }
  add(c, "test", test, test_why);
}

// Every benchmark program found, with the metric its kind is timed by.
void propose_benchmarks(const ProjectScan& scan, ProposedConfig& c) {
  ordered_json benchmarks = ordered_json::array();
  std::vector<std::string> bench_why = {"Benchmarks: what maxcode times and, unless compare_output is false, whose "
                                        "printed output must not change."};
  bool any_plain_without_seed = false, any_framework = false;
  std::set<std::string> names;
  for (const ScannedBenchmark& b : scan.benchmarks) {
    benchmarks.push_back(benchmark_entry(b));
    // Two programs of one name in different folders (Meson and make allow it): the config
    // needs unique names, so a repeated one is named by its path.
    if (!names.insert(b.name).second) benchmarks.back()["name"] = b.binary;
    bench_why.push_back(b.name + ": " + b.why + (b.cuda ? "; CUDA: timed by its kernels" : "") + ".");
    any_plain_without_seed = any_plain_without_seed || (b.framework == "plain" && !b.reads_seed);
    any_framework = any_framework || b.framework != "plain";
  }
  if (any_framework)
    bench_why.push_back("A framework's program prints times, not results: correctness comes from the tests.");
  add(c, "benchmarks", benchmarks, bench_why);
  if (scan.benchmarks.size() > 1)
    c.decisions.push_back("All " + std::to_string(scan.benchmarks.size()) +
                          " benchmark programs are listed and every one is timed: keep those that time the code "
                          "you want faster.");
  if (any_plain_without_seed)
    c.decisions.push_back("A plain benchmark does not mention MAXCODE_SEED: make it build its inputs from that "
                          "variable (maxcode runs it with three seeds), so that a candidate is checked on more than "
                          "one input.");
  if (any_framework)
    c.decisions.push_back("Correctness of candidates comes from the tests only (a framework benchmark prints times): "
                          "make sure they cover the functions the benchmark times.");
}

// What may change: the library's source folders, not the tests or the benchmarks.
void propose_scope(const ProjectScan& scan, ProposedConfig& c) {
  ordered_json scope;
  std::vector<std::string> include;
  for (const std::string& dir : scan.source_dirs) include.push_back(dir + "/**");
  if (include.empty()) include.push_back("**");
  scope["include"] = include;
  std::vector<std::string> exclude;
  if (include.front() == "**")
    for (const char* dir : {"tests", "test", "bench", "benchmark", "benchmarks"}) exclude.push_back(std::string(dir) + "/**");
  for (const std::string& file : scan.benchmark_sources_in_scope) exclude.push_back(file);
  scope["exclude"] = exclude;
  add(c, "scope", scope, {"What may change: the library's source folders, not the tests or the benchmarks."});
  c.decisions.push_back("scope.include is " + inline_json(scope["include"]) +
                        ": check that it covers the code maxcode may change, and nothing else (generated or "
                        "third-party code belongs in scope.exclude).");
}

// Who proposes candidates: tune where the repository has knobs, else a model.
void propose_search(const ProjectScan& scan, ProposedConfig& c) {
  // tune only where there is something to tune: a repository without knobs gets the
  // model's policy, whose key is checked before anything is built (search/method.h).
  if (scan.knobs) {
    add(c, "search", ordered_json{{"policy", "tune"}, {"max_evaluations", 16}},
        {"DECIDE: who proposes candidates. \"tune\" tries the values of knobs (// maxcode: tune NAME v1 v2 ... on a",
         "#define or constexpr, or search.knobs); \"replay\" runs candidate files you wrote; \"maxcode\" asks a model",
         "(set llm.propose; docs/method.md)."});
    c.decisions.push_back("search.policy is \"tune\": the repository declares knobs (`// maxcode: tune` comments); "
                          "for a model's proposals set llm.propose and \"policy\": \"maxcode\".");
  } else {
    add(c, "search", ordered_json{{"policy", "maxcode"}, {"max_evaluations", 16}},
        {"DECIDE: who proposes candidates. \"maxcode\" asks the model of llm.propose (docs/method.md); \"replay\"",
         "runs candidate files you wrote (search.replay_dir); \"tune\" needs knobs (// maxcode: tune NAME v1 v2 ...),",
         "and this repository declares none."});
    add(c, "llm", ordered_json{{"propose", ordered_json{{"provider", "openai"}, {"model", "gpt-4.1"}}}},
        {"DECIDE: the model that proposes candidates; its key is read from OPENAI_API_KEY (api_key_env names",
         "another variable; provider \"anthropic\" or \"command\" for others, docs/configuration.md)."});
    c.decisions.push_back("search.policy is \"maxcode\" with llm.propose openai gpt-4.1: the repository declares no "
                          "knobs for \"tune\"; export OPENAI_API_KEY (checked before any build), or choose \"replay\" "
                          "with search.replay_dir.");
  }
}

// The usual commands of each build system init does not read (project_scan.cc names
// them): a config to start from.
struct UnreadBuild {
  const char* system;
  const char* build;  // the "build" object, as JSON
  const char* test;
  const char* bench;
};
constexpr UnreadBuild kUnreadBuilds[] = {
    {"Bazel", R"({"command": "bazel build -c opt //..."})", "bazel test //...", "./bazel-bin/bench"},
    {"Autotools", R"({"configure": "autoreconf -fi && ./configure", "command": "make -j"})", "make check", "./bench"},
    {"a configure script", R"({"configure": "./configure", "command": "make -j"})", "make check", "./bench"},
    {"SCons", R"({"command": "scons -j4"})", "...", "./bench"},
    {"xmake", R"({"configure": "xmake f -m release", "command": "xmake"})", "xmake test", "..."},
    {"premake", R"({"configure": "premake5 gmake2", "command": "make config=release -j"})", "...", "..."},
};

// "The repository is built with Bazel (MODULE.bazel), which `maxcode init` does not
// read ..." and a config to start from; "" when the scan found no such system.
std::string unread_build_advice(const ProjectScan& scan) {
  for (const UnreadBuild& b : kUnreadBuilds) {
    if (scan.unread_build_system != b.system) continue;
    const std::string system = b.system;
    return "The repository is built with " + system + " (" + scan.unread_build_file +
           "), which `maxcode init` does not read (it reads CMake, Meson and Makefiles). Write .maxcode.json "
           "yourself;\nfor " +
           system + ", to start from:\n      {\"build\": " + b.build + ",\n       \"test\": {\"command\": \"" + b.test +
           "\"},\n       \"benchmarks\": [{\"name\": \"main\", \"command\": \"" + b.bench +
           "\"}]}\n"
           "with a benchmark program that runs the code to make faster on inputs made from the environment\n"
           "variable MAXCODE_SEED and prints its results (or a Google Benchmark program, with\n"
           "\"metric\": \"google-benchmark\"). See docs/configuration.md.";
  }
  return "";
}

}  // namespace

std::string no_benchmark_message(const ProjectScan& scan) {
  // The whole path: `maxcode init .` would otherwise read "no benchmark found in ..".
  std::error_code ec;
  const std::filesystem::path shown = std::filesystem::weakly_canonical(std::filesystem::absolute(scan.root), ec);
  std::string text = "no benchmark found in " + (ec ? scan.root : shown).string() + ". maxcode looked for:\n";
  for (const std::string& what : scan_looked_for()) text += "  - " + what + "\n";
  for (const std::string& note : scan.notes) text += "  (" + note + ")\n";
  if (const std::string advice = unread_build_advice(scan); !advice.empty()) return text + advice;
  text +=
      "maxcode times a program and compares what it prints, so it needs one. Either\n"
      "  - add a benchmark program to the build (add_executable(bench bench/bench.cc) in CMakeLists.txt) that\n"
      "    runs the code to make faster on inputs made from the environment variable MAXCODE_SEED and prints\n"
      "    its results, or a Google Benchmark program (BENCHMARK_MAIN(), linked with benchmark::benchmark),\n"
      "    then run `maxcode init` again; or\n"
      "  - write .maxcode.json yourself, with at least\n"
      "      {\"build\": {\"command\": \"...\"}, \"test\": {\"command\": \"...\"},\n"
      "       \"benchmarks\": [{\"name\": \"main\", \"command\": \"./build/bench\"}]}\n"
      "See docs/init.md and docs/configuration.md.";
  return text;
}

ProposedConfig propose_config(const ProjectScan& scan) {
  if (scan.benchmarks.empty()) throw NoBenchmarkError(no_benchmark_message(scan));
  if (!scan.cmake && !scan.meson && !scan.makefile) {
    const std::string advice = unread_build_advice(scan);
    throw NoBenchmarkError("found benchmark programs in " + scan.root.string() +
                           " but no build (CMakeLists.txt, meson.build or Makefile): " +
                           (advice.empty() ? "write .maxcode.json yourself (docs/configuration.md)" : advice));
  }
  ProposedConfig c;
  add(c, "$schema", kConfigSchemaUrl, {"The schema lets editors check this file; maxcode reads it strictly anyway."});
  propose_build(scan, c);
  propose_test(scan, c);
  propose_benchmarks(scan, c);
  propose_scope(scan, c);
  add(c, "targets", ordered_json{{"functions", ordered_json::array()}},
      {"DECIDE: which function. Empty: `maxcode optimize` profiles the benchmarks and takes the hottest function",
       "in scope; name one (\"functions\": [\"my_kernel_launcher\"]) to choose it yourself."});
  c.decisions.push_back(
      "targets.functions is empty: `maxcode optimize` will take the hottest function in scope from "
      "a profile; name one to choose it yourself.");

  propose_search(scan, c);
  add(c, "acceptance", ordered_json{{"min_speedup", 1.05}},
      {"A candidate wins only when the lower end of its 95% interval beats this and the A/A noise floor."});
  if (scan.binary_dir.find('/') == std::string::npos && scan.binary_dir != "build") {
    add(c, "workspace", ordered_json{{"exclude", {"build", ".maxcode", scan.binary_dir}}},
        {"Build outputs are not copied into candidate workspaces."});
  }
  if (scan.cuda)
    c.decisions.push_back("The benchmarks are timed by their GPU kernels: run `maxcode optimize` on a machine with "
                          "an NVIDIA GPU, CUPTI and (for the sanitizer and ncu checks) compute-sanitizer and ncu.");
  return c;
}

std::string render_config(const ProposedConfig& config) {
  std::string text =
      "// maxcode project file, written by `maxcode init`. docs/configuration.md explains every field;\n"
      "// lines that start with DECIDE are choices maxcode could not make for you.\n{\n";
  for (std::size_t i = 0; i < config.fields.size(); ++i) {
    const auto& [key, value] = config.fields[i];
    if (i > 0) text += "\n";
    for (const std::string& line : config.comments[i]) text += "  // " + line + "\n";
    text += "  " + quoted(key) + ": ";
    if (key == "benchmarks") {
      text += "[\n";
      for (std::size_t b = 0; b < value.size(); ++b)
        text += "    " + inline_json(value[b]) + (b + 1 < value.size() ? ",\n" : "\n");
      text += "  ]";
    } else {
      text += inline_json(value);
    }
    text += i + 1 < config.fields.size() ? ",\n" : "\n";
  }
  return text + "}\n";
}

}  // namespace maxcode
