// Strict parsing of `.maxcode.json`. Every field goes through a Reader, which knows the
// field path and the fields its object may have, so every error names the file and the
// exact field, and a typo is an error with a suggestion rather than a silent default.
#include "runner/core/config.h"

#include "runner/util/files.h"
#include "runner/util/json_fields.h"
#include "runner/util/json_io.h"
#include "runner/util/json_reader.h"
#include "runner/util/secrets.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <regex>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

namespace maxcode {
namespace {

using nlohmann::json;

bool identifier_head(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identifier_tail(char c) { return identifier_head(c) || std::isdigit(static_cast<unsigned char>(c)); }

bool is_identifier(std::string_view name) {
  return !name.empty() && identifier_head(name.front()) &&
         std::all_of(name.begin() + 1, name.end(), identifier_tail);
}

// The checks below scan by hand: std::regex recurses once per character and a long
// enough value (a hostile config) overflows the stack.

// The identifier at text[at] (moving `at` past it), or false.
bool skip_identifier(std::string_view text, std::size_t& at) {
  if (at >= text.size() || !identifier_head(text[at])) return false;
  while (++at < text.size() && identifier_tail(text[at])) {
  }
  return true;
}

// A function's name, qualified or not: `fn`, `ns::Cls::fn`, `::fn`.
bool is_qualified_name(std::string_view text) {
  std::size_t at = text.rfind("::", 0) == 0 ? 2 : 0;
  while (true) {
    if (!skip_identifier(text, at)) return false;
    if (at == text.size()) return true;
    if (text.compare(at, 2, "::") != 0) return false;
    at += 2;
  }
}

// A product of parameter names and whole numbers, spaces allowed: `width * height * 4`.
bool is_product(std::string_view text) {
  auto space = [&](std::size_t& at) {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  };
  std::size_t at = 0;
  while (true) {
    space(at);
    if (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
      while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
    } else if (!skip_identifier(text, at)) {
      return false;
    }
    space(at);
    if (at == text.size()) return true;
    if (text[at] != '*') return false;
    ++at;
  }
}

constexpr std::size_t kMaxKernelPattern = 256;

using Node = JsonNode;

// A path or glob relative to the repository root.
std::string relative_path(const Node& node) {
  std::string text = node.non_empty_string();
  if (text.front() == '/') node.fail("must be relative to the repository root, got '" + text + "'");
  if (escapes_root(text)) node.fail("must stay inside the repository ('..' climbs out of it), got '" + text + "'");
  return text;
}

// A host path: absolute, without '..' (what it names is the host's, not the repository's).
std::string absolute_path(const Node& node) {
  std::string text = node.non_empty_string();
  if (text.front() != '/') node.fail("must be an absolute path, got '" + text + "'");
  for (const auto& part : std::filesystem::path(text)) {
    if (part == "..") node.fail("must not contain '..', got '" + text + "'");
  }
  return text;
}

// An environment variable name, or a prefix ending in '*'; never one that looks
// secret, since candidates must not see secrets whatever the config says.
std::string env_name(const Node& node) {
  std::string text = node.non_empty_string();
  std::string stem = text.back() == '*' ? text.substr(0, text.size() - 1) : text;
  bool valid = !stem.empty() && !std::isdigit(static_cast<unsigned char>(stem.front()));
  for (char c : stem) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!valid)
    node.fail("must be a variable name (letters, digits, '_'), or a prefix ending in '*', got '" + text + "'");
  if (looks_secret(stem)) node.fail("names a secret ('" + text + "'): candidates never see secrets");
  return text;
}

void expect_array(const Node& node) { node.expect(node.value().is_array(), "an array"); }

// One object of .maxcode.json: its known fields are those config_fields() lists for
// `section` ("build", "benchmarks[]").
class Reader : public JsonObject {
 public:
  Reader(const Node& node, const std::string& section) : JsonObject(node, config_fields().at(section)) {}
};

// The value of `node` when it is one of `options`.
std::string one_of(const Node& node, std::string_view what,
                   const std::vector<std::string_view>& options) {
  std::string value = node.string();
  if (std::find(options.begin(), options.end(), value) == options.end()) {
    node.fail("unsupported " + std::string(what) + " '" + value + "' (supported: " +
              join_words(options) + ")");
  }
  return value;
}

BuildConfig parse_build(const Node& node) {
  Reader r(node, "build");
  BuildConfig build;
  build.configure = r.string("configure");
  build.command = r.require("command").non_empty_string();
  build.timeout_s = r.number("timeout_s", build.timeout_s, kPositive);
  return build;
}

TestConfig parse_test(const Node& node) {
  Reader r(node, "test");
  TestConfig test;
  test.command = r.require("command").non_empty_string();
  test.timeout_s = r.number("timeout_s", test.timeout_s, kPositive);
  return test;
}

// `"varying": [{"line": "time: # ms", "number": 1}]`: numbers counted from 1, as the
// evaluator's messages name them.
std::vector<VaryingField> parse_varying(const Node& node) {
  expect_array(node);
  std::vector<VaryingField> fields;
  for (std::size_t i = 0; i < node.value().size(); ++i) {
    Reader r(node.element(i), "benchmarks[].varying[]");
    VaryingField field;
    field.line_shape = r.require("line").non_empty_string();
    if (field.line_shape.find('#') == std::string::npos)
      r.fail("line", "a line shape with each number written '#', such as \"time: # ms\"");
    field.slot = r.require("number").integer<std::size_t>(1) - 1;
    fields.push_back(std::move(field));
  }
  return fields;
}

BenchmarkConfig parse_benchmark(const Node& node) {
  Reader r(node, "benchmarks[]");
  BenchmarkConfig bench;
  bench.name = r.require("name").non_empty_string();
  bench.command = r.require("command").non_empty_string();
  if (auto metric = r.get("metric"))
    bench.metric = one_of(*metric, "metric", {"wall", "kernels", "google-benchmark"});
  bench.kernels = r.strings("kernels", {}, &Node::non_empty_string);
  for (std::size_t i = 0; i < bench.kernels.size(); ++i) {
    // std::regex compiles a group by recursion, and matches by recursion too: a short
    // pattern keeps both within the stack.
    if (bench.kernels[i].size() > kMaxKernelPattern)
      r.require("kernels").element(i).fail("a pattern of at most " + std::to_string(kMaxKernelPattern) +
                                           " characters, got " + std::to_string(bench.kernels[i].size()));
    try {
      std::regex check(bench.kernels[i]);
    } catch (const std::regex_error& error) {
      r.require("kernels").element(i).fail(std::string("not a regular expression: ") + error.what());
    }
  }
  bench.warmup_launches = r.integer("warmup_launches", bench.warmup_launches, 0);
  if (auto roofline = r.get("roofline")) {
    Reader rr(*roofline, "benchmarks[].roofline");
    bench.roofline_bytes = rr.number("bytes", 0, kNonNegative);
    bench.roofline_flops = rr.number("flops", 0, kNonNegative);
  }
  if (bench.metric != "kernels") {
    for (const char* field : {"kernels", "warmup_launches", "roofline"})
      if (r.get(field)) r.fail(field, "only for \"metric\": \"kernels\"");
  }
  if (auto filter = r.get("filter")) {
    if (bench.metric != "google-benchmark") r.fail("filter", "only for \"metric\": \"google-benchmark\"");
    bench.filter = filter->non_empty_string();
    try {
      std::regex check(bench.filter);
    } catch (const std::regex_error& error) {
      filter->fail(std::string("not a regular expression: ") + error.what());
    }
  }
  if (bench.metric == "google-benchmark") {
    // Its stdout is its table of times, different on every run: correctness comes from
    // the tests (docs/init.md "Google Benchmark").
    bench.compare_output = r.boolean("compare_output", false);
    if (bench.compare_output)
      r.fail("compare_output", "a Google Benchmark program prints its times, which differ on every run: "
                               "set false (correctness comes from test.command)");
  } else {
    bench.compare_output = r.boolean("compare_output", bench.compare_output);
  }
  if (auto varying = r.get("varying")) {
    if (!bench.compare_output) r.fail("varying", "only where the output is compared (compare_output true)");
    bench.varying = parse_varying(*varying);
  }
  bench.rtol = r.number("rtol", bench.rtol, kNonNegative);
  bench.atol = r.number("atol", bench.atol, kNonNegative);
  bench.timeout_s = r.number("timeout_s", bench.timeout_s, kPositive);
  return bench;
}

std::vector<BenchmarkConfig> parse_benchmarks(const Node& node) {
  expect_array(node);
  if (node.value().empty()) node.fail("must list at least one benchmark");
  std::vector<BenchmarkConfig> benchmarks;
  for (std::size_t i = 0; i < node.value().size(); ++i) {
    Node element = node.element(i);
    benchmarks.push_back(parse_benchmark(element));
    // Names key the baseline outputs and timings, so two benchmarks must not share one.
    for (std::size_t j = 0; j < i; ++j) {
      if (benchmarks[j].name == benchmarks[i].name) {
        element.child("name").fail("duplicate name '" + benchmarks[i].name + "' (also used by " + node.path() + "[" +
                                   std::to_string(j) + "])");
      }
    }
  }
  return benchmarks;
}

ScopeConfig parse_scope(const Node& node) {
  Reader r(node, "scope");
  ScopeConfig scope;
  scope.include = r.strings("include", scope.include, relative_path);
  if (scope.include.empty()) r.fail("include", "must list at least one glob");
  scope.exclude = r.strings("exclude", scope.exclude, relative_path);
  return scope;
}

// A function's name as a unit lists it: an identifier, qualified or not (ns::Cls::fn).
std::string function_name(const Node& node) {
  std::string text = node.non_empty_string();
  if (!is_qualified_name(text))
    node.fail("must be a function name (qualified allowed: ns::fn), got '" + text + "'");
  return text;
}

UnitConfig parse_unit(const Node& node) {
  Reader r(node, "targets.unit");
  UnitConfig unit;
  for (const char* field : {"add", "leave_out"}) {
    auto list = r.get(field);
    if (!list) continue;
    expect_array(*list);
    std::vector<std::string>& names = std::string_view(field) == "add" ? unit.add : unit.leave_out;
    for (std::size_t i = 0; i < list->value().size(); ++i) {
      const Node element = list->element(i);
      std::string name = function_name(element);
      if (std::find(names.begin(), names.end(), name) != names.end())
        element.fail("'" + name + "' is listed twice");
      names.push_back(std::move(name));
    }
  }
  for (std::size_t i = 0; i < unit.leave_out.size(); ++i) {
    if (std::find(unit.add.begin(), unit.add.end(), unit.leave_out[i]) != unit.add.end())
      r.get("leave_out")->element(i).fail("'" + unit.leave_out[i] + "' is also in targets.unit.add");
  }
  return unit;
}

TargetsConfig parse_targets(const Node& node) {
  Reader r(node, "targets");
  TargetsConfig targets;
  targets.functions = r.strings("functions", {}, &Node::non_empty_string);
  targets.signature = r.string("signature");
  if (auto prefer = r.get("prefer")) targets.prefer = one_of(*prefer, "prefer", {"gpu", "cpu"});
  if (auto interface = r.get("interface")) {
    interface->expect(interface->value().is_object(), "an object");
    for (const auto& [name, value] : interface->value().items()) {
      Node size = interface->child(name);
      const std::string text = size.non_empty_string();
      // A product of parameter names and whole numbers: nothing else is evaluated.
      if (!is_product(text))
        size.fail("must be a product of parameter names and whole numbers (\"width*height\"), got '" +
                  text + "'");
      targets.interface[name] = text;
    }
  }
  if (auto unit = r.get("unit")) targets.unit = parse_unit(*unit);
  return targets;
}

// A knob value as it will be written into the source: strings as given, numbers in
// their JSON spelling (8, not 8.0; 0.5 stays 0.5).
std::string knob_value(const Node& node) {
  if (node.value().is_number()) return dump_json(node.value());
  node.expect(node.value().is_string(), "a number or a string");
  return node.non_empty_string();
}

KnobConfig parse_knob(const Node& node) {
  Reader r(node, "search.knobs[]");
  KnobConfig knob;
  knob.name = r.require("name").non_empty_string();
  if (!is_identifier(knob.name)) {
    r.fail("name", "'" + knob.name + "' is not a C/C++ identifier");
  }
  Node values = r.require("values");
  expect_array(values);
  if (values.value().empty()) values.fail("must list at least one value");
  for (std::size_t i = 0; i < values.value().size(); ++i) {
    knob.values.push_back(knob_value(values.element(i)));
  }
  if (auto file = r.get("file")) knob.file = relative_path(*file);
  return knob;
}

std::vector<KnobConfig> parse_knobs(const Node& node) {
  expect_array(node);
  std::vector<KnobConfig> knobs;
  for (std::size_t i = 0; i < node.value().size(); ++i) {
    Node element = node.element(i);
    knobs.push_back(parse_knob(element));
    for (std::size_t j = 0; j < i; ++j) {
      if (knobs[j].name == knobs[i].name && knobs[j].file == knobs[i].file) {
        element.child("name").fail("duplicate knob '" + knobs[i].name + "' (also " + node.path() + "[" +
                                   std::to_string(j) + "])");
      }
    }
  }
  return knobs;
}

SearchConfig parse_search(const Node& node) {
  Reader r(node, "search");
  SearchConfig search;
  if (auto policy = r.get("policy"))
    search.policy = search_policy_from_name(one_of(*policy, "policy", search_policy_names()));
  search.max_evaluations = r.integer("max_evaluations", search.max_evaluations, 1);
  search.batch = r.integer("batch", search.batch, 1);
  search.proposals = r.integer("proposals", search.proposals, 0);
  search.max_tokens = r.integer("max_tokens", search.max_tokens, 0);
  search.max_dollars = r.number("max_dollars", search.max_dollars, {0.0, false});
  if (auto critic = r.get("critic"))
    search.critic = critic_choice_from_name(one_of(*critic, "critic", critic_choice_names()));
  if (auto reranker = r.get("reranker"))
    search.reranker = reranker_choice_from_name(one_of(*reranker, "reranker", reranker_choice_names()));
  search.trajectory_window = r.integer("trajectory_window", search.trajectory_window, 1);
  // Replay may get its directory on the command line instead, so it is not required here.
  if (auto dir = r.get("replay_dir")) search.replay_dir = relative_path(*dir);
  if (auto knobs = r.get("knobs")) search.knobs = parse_knobs(*knobs);
  search.seed = r.integer("seed", search.seed, 0);
  search.max_wall_s = r.number("max_wall_s", search.max_wall_s, kPositive);
  return search;
}

// Seeds feed MAXCODE_SEED: zero is refused because a benchmark may take it as "no
// seed" and produce all-zero inputs, and repeats would make three runs prove only one.
std::vector<std::uint64_t> parse_seeds(const Node& node) {
  expect_array(node);
  std::vector<std::uint64_t> seeds;
  for (std::size_t i = 0; i < node.value().size(); ++i) {
    Node element = node.element(i);
    auto seed = element.integer<std::uint64_t>(0);
    if (seed == 0) element.fail("must be non-zero");
    if (std::find(seeds.begin(), seeds.end(), seed) != seeds.end()) {
      element.fail("duplicate seed " + std::to_string(seed));
    }
    seeds.push_back(seed);
  }
  if (seeds.size() < 3) {
    node.fail("need at least 3 distinct non-zero seeds, got " + std::to_string(seeds.size()));
  }
  return seeds;
}

AcceptanceConfig parse_acceptance(const Node& node) {
  Reader r(node, "acceptance");
  AcceptanceConfig acceptance;
  acceptance.min_speedup = r.number("min_speedup", acceptance.min_speedup, {1.0, false});
  if (auto seeds = r.get("seeds")) acceptance.seeds = parse_seeds(*seeds);
  acceptance.warmup_rounds = r.integer("warmup_rounds", acceptance.warmup_rounds, 0);
  // Fewer than 3 paired rounds give no usable bootstrap interval.
  acceptance.min_rounds = r.integer("min_rounds", acceptance.min_rounds, 3);
  acceptance.max_rounds = r.integer("max_rounds", acceptance.max_rounds, 3);
  if (acceptance.max_rounds < acceptance.min_rounds) {
    r.fail("max_rounds", "must be >= min_rounds (" + std::to_string(acceptance.min_rounds) +
                             "), got " + std::to_string(acceptance.max_rounds));
  }
  acceptance.max_timing_s = r.number("max_timing_s", acceptance.max_timing_s, kNonNegative);
  acceptance.target_relative_width =
      r.number("target_relative_width", acceptance.target_relative_width, kPositive);
  return acceptance;
}

WorkspaceConfig parse_workspace(const Node& node) {
  Reader r(node, "workspace");
  WorkspaceConfig workspace;
  workspace.exclude = r.strings("exclude", workspace.exclude, relative_path);
  workspace.output_cap_bytes = r.integer("output_cap_bytes", workspace.output_cap_bytes, 1);
  workspace.isolate = r.boolean("isolate", workspace.isolate);
  workspace.env_allow = r.strings("env_allow", workspace.env_allow, env_name);
  workspace.sandbox_paths = r.strings("sandbox_paths", workspace.sandbox_paths, absolute_path);
  workspace.max_processes = r.integer("max_processes", workspace.max_processes, 0);
  workspace.max_memory_mb = r.integer("max_memory_mb", workspace.max_memory_mb, 0);
  workspace.max_disk_mb = r.integer("max_disk_mb", workspace.max_disk_mb, 0);
  workspace.max_cpu_s = r.number("max_cpu_s", workspace.max_cpu_s, kNonNegative);
  return workspace;
}

GpuConfig parse_gpu(const Node& node) {
  Reader r(node, "gpu");
  GpuConfig gpu;
  if (auto tools = r.get("sanitizer")) {
    gpu.sanitizer.clear();
    expect_array(*tools);
    for (std::size_t i = 0; i < tools->value().size(); ++i)
      gpu.sanitizer.push_back(one_of(tools->element(i), "sanitizer tool",
                                     {"memcheck", "racecheck", "synccheck", "initcheck"}));
  }
  if (auto sanitize = r.get("sanitize")) gpu.sanitize = one_of(*sanitize, "sanitize", {"test", "benchmarks"});
  gpu.sanitizer_timeout_s = r.number("sanitizer_timeout_s", gpu.sanitizer_timeout_s, kPositive);
  gpu.ptxas_report = r.boolean("ptxas_report", gpu.ptxas_report);
  gpu.ncu = r.boolean("ncu", gpu.ncu);
  gpu.ncu_kernels = r.integer("ncu_kernels", gpu.ncu_kernels, 1);
  gpu.ncu_timeout_s = r.number("ncu_timeout_s", gpu.ncu_timeout_s, kPositive);
  gpu.witness = r.boolean("witness", gpu.witness);
  if (auto tolerance = r.get("witness_tolerance")) {
    gpu.witness_tolerance = tolerance->number(kPositive);
    // Beyond 100% (a factor of 2) the witness would pass the very tricks it is there for.
    if (gpu.witness_tolerance > 1) tolerance->fail("must be <= 1, got " + dump_json(tolerance->value()));
  }
  return gpu;
}

std::string read_config_text(const std::filesystem::path& file) {
  auto fail = [&] {
    throw ConfigError(file.string() + ": cannot read: " + std::strerror(errno));
  };
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> stream(std::fopen(file.c_str(), "rb"),
                                                         &std::fclose);
  if (!stream) fail();
  std::string text;
  char buffer[1 << 16];
  std::size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, stream.get())) > 0) text.append(buffer, got);
  if (std::ferror(stream.get())) fail();  // e.g. EISDIR: fopen accepts a directory
  return text;
}

}  // namespace

const std::map<std::string, std::vector<std::string_view>>& config_fields() {
  static const std::map<std::string, std::vector<std::string_view>> fields = {
      {"",
       {"$schema", "build", "test", "benchmarks", "scope", "targets", "search", "acceptance", "workspace", "gpu",
        "llm"}},
      {"build", {"configure", "command", "timeout_s"}},
      {"test", {"command", "timeout_s"}},
      {"benchmarks[]",
       {"name", "command", "metric", "kernels", "warmup_launches", "roofline", "filter", "compare_output", "varying",
        "rtol", "atol", "timeout_s"}},
      {"benchmarks[].roofline", {"bytes", "flops"}},
      {"benchmarks[].varying[]", {"line", "number"}},
      {"scope", {"include", "exclude"}},
      {"targets", {"functions", "signature", "interface", "prefer", "unit"}},
      {"targets.unit", {"add", "leave_out"}},
      {"search",
       {"policy", "max_evaluations", "batch", "proposals", "replay_dir", "knobs", "seed", "max_wall_s", "max_tokens",
        "max_dollars", "critic", "reranker", "trajectory_window"}},
      {"search.knobs[]", {"name", "values", "file"}},
      {"acceptance",
       {"min_speedup", "seeds", "warmup_rounds", "min_rounds", "max_rounds", "max_timing_s", "target_relative_width"}},
      {"workspace",
       {"exclude", "output_cap_bytes", "isolate", "env_allow", "sandbox_paths", "max_processes", "max_memory_mb",
        "max_disk_mb", "max_cpu_s"}},
      {"gpu",
       {"sanitizer", "sanitize", "sanitizer_timeout_s", "ptxas_report", "ncu", "ncu_kernels", "ncu_timeout_s",
        "witness", "witness_tolerance"}},
  };
  return fields;
}

Config parse_config(const json& document, const std::string& file_label) {
  const Node root_node(document, file_label, raise_as<ConfigError>);
  Reader root(root_node, "");
  // For editors only (docs/schema/maxcode.schema.json); the reader itself is the check.
  if (auto schema = root.get("$schema")) schema->non_empty_string();
  Config config;
  config.file = file_label;
  config.build = parse_build(root.require("build"));
  config.test = parse_test(root.require("test"));
  config.benchmarks = parse_benchmarks(root.require("benchmarks"));
  if (auto node = root.get("scope")) config.scope = parse_scope(*node);
  if (auto node = root.get("targets")) config.targets = parse_targets(*node);
  if (auto node = root.get("search")) config.search = parse_search(*node);
  if (auto node = root.get("acceptance")) config.acceptance = parse_acceptance(*node);
  if (auto node = root.get("workspace")) config.workspace = parse_workspace(*node);
  if (auto node = root.get("gpu")) config.gpu = parse_gpu(*node);
  if (auto node = root.get("llm")) {
    // Validated by the LLM providers, which know their own fields.
    node->expect(node->value().is_object(), "an object");
    config.llm = node->value();
  }
  return config;
}

void keep_out_of_scope(ScopeConfig& scope, const std::filesystem::path& repo, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  fs::path relative = dir;
  if (dir.is_absolute()) {
    if (repo.empty()) return;
    std::error_code ec;
    const fs::path root = fs::weakly_canonical(repo, ec);
    const fs::path full = fs::weakly_canonical(dir, ec);
    if (ec) return;
    relative = full.lexically_relative(root);
  }
  std::string text = relative.lexically_normal().generic_string();
  while (!text.empty() && text.back() == '/') text.pop_back();
  if (text.empty() || text == "." || text.starts_with("..") || text.front() == '/') return;
  const std::string glob = text + "/**";
  if (std::find(scope.exclude.begin(), scope.exclude.end(), glob) == scope.exclude.end()) scope.exclude.push_back(glob);
}

Config load_config(const std::filesystem::path& file) {
  std::string text = read_config_text(file);
  json document;
  try {
    // `//` and `/* */` comments are allowed: `maxcode init` explains its choices in them.
    document = parse_json_input(text, file.string(), {.comments = true});
  } catch (const JsonInputError& error) {
    throw ConfigError(error.what());
  }
  Config config = parse_config(document, file.string());
  config.file = file;
  return config;
}

// Optional strings that are empty are left out, so the output parses back unchanged.
namespace {

void put_optional(json& object, const char* key, const std::string& value) {
  if (!value.empty()) object[key] = value;
}

}  // namespace

json varying_json(const std::vector<VaryingField>& fields) {
  json out = json::array();
  for (const VaryingField& f : fields) out.push_back({{"line", f.line_shape}, {"number", f.slot + 1}});
  return out;
}

namespace {

json benchmark_json(const BenchmarkConfig& bench) {
  json entry = {{"name", bench.name},          {"command", bench.command},
                {"metric", bench.metric},      {"compare_output", bench.compare_output},
                {"rtol", bench.rtol},          {"atol", bench.atol},
                {"timeout_s", bench.timeout_s}};
  if (bench.metric == "kernels") {
    entry["kernels"] = bench.kernels;
    entry["warmup_launches"] = bench.warmup_launches;
    entry["roofline"] = {{"bytes", bench.roofline_bytes}, {"flops", bench.roofline_flops}};
  }
  if (!bench.filter.empty()) entry["filter"] = bench.filter;
  if (!bench.varying.empty()) entry["varying"] = varying_json(bench.varying);
  return entry;
}

json targets_json(const TargetsConfig& t) {
  json targets = {{"functions", t.functions}};
  put_optional(targets, "signature", t.signature);
  put_optional(targets, "prefer", t.prefer);
  if (!t.interface.empty()) targets["interface"] = t.interface;
  if (t.unit != UnitConfig{}) targets["unit"] = {{"add", t.unit.add}, {"leave_out", t.unit.leave_out}};
  return targets;
}

json search_json(const SearchConfig& s) {
  json knobs = json::array();
  for (const KnobConfig& knob : s.knobs) {
    json entry = {{"name", knob.name}, {"values", knob.values}};
    put_optional(entry, "file", knob.file);
    knobs.push_back(entry);
  }
  json search = {{"policy", search_policy_name(s.policy)},
                 {"max_evaluations", s.max_evaluations},
                 {"batch", s.batch},
                 {"knobs", knobs},
                 {"seed", s.seed},
                 {"max_wall_s", s.max_wall_s},
                 {"proposals", s.proposals},
                 {"max_tokens", s.max_tokens},
                 {"max_dollars", s.max_dollars},
                 {"critic", critic_choice_name(s.critic)},
                 {"reranker", reranker_choice_name(s.reranker)},
                 {"trajectory_window", s.trajectory_window}};
  put_optional(search, "replay_dir", s.replay_dir);
  return search;
}

json acceptance_json(const AcceptanceConfig& a) {
  return {{"min_speedup", a.min_speedup},
          {"seeds", a.seeds},
          {"warmup_rounds", a.warmup_rounds},
          {"min_rounds", a.min_rounds},
          {"max_rounds", a.max_rounds},
          {"max_timing_s", a.max_timing_s},
          {"target_relative_width", a.target_relative_width}};
}

json workspace_json(const WorkspaceConfig& w) {
  return {{"exclude", w.exclude},
          {"output_cap_bytes", w.output_cap_bytes},
          {"isolate", w.isolate},
          {"env_allow", w.env_allow},
          {"sandbox_paths", w.sandbox_paths},
          {"max_processes", w.max_processes},
          {"max_memory_mb", w.max_memory_mb},
          {"max_disk_mb", w.max_disk_mb},
          {"max_cpu_s", w.max_cpu_s}};
}

json gpu_json(const GpuConfig& g) {
  return {{"sanitizer", g.sanitizer},         {"sanitize", g.sanitize}, {"sanitizer_timeout_s", g.sanitizer_timeout_s},
          {"ptxas_report", g.ptxas_report},   {"ncu", g.ncu},           {"ncu_kernels", g.ncu_kernels},
          {"ncu_timeout_s", g.ncu_timeout_s}, {"witness", g.witness},   {"witness_tolerance", g.witness_tolerance}};
}

}  // namespace

json to_json(const Config& config) {
  json build = {{"command", config.build.command}, {"timeout_s", config.build.timeout_s}};
  put_optional(build, "configure", config.build.configure);
  json benchmarks = json::array();
  for (const BenchmarkConfig& bench : config.benchmarks) benchmarks.push_back(benchmark_json(bench));
  json document = {
      {"build", build},
      {"test", {{"command", config.test.command}, {"timeout_s", config.test.timeout_s}}},
      {"benchmarks", benchmarks},
      {"scope", {{"include", config.scope.include}, {"exclude", config.scope.exclude}}},
      {"targets", targets_json(config.targets)},
      {"search", search_json(config.search)},
      {"acceptance", acceptance_json(config.acceptance)},
      {"workspace", workspace_json(config.workspace)},
      {"gpu", gpu_json(config.gpu)},
  };
  if (!config.llm.is_null()) document["llm"] = config.llm;
  return document;
}

bool uses_gpu_timing(const Config& config) {
  for (const BenchmarkConfig& bench : config.benchmarks)
    if (bench.metric == "kernels") return true;
  return false;
}

}  // namespace maxcode
