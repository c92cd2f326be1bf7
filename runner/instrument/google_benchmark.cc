#include "runner/instrument/google_benchmark.h"

#include <map>
#include <stdexcept>
#include <string_view>

#include "runner/util/beneath.h"

namespace maxcode {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double unit_seconds(const std::string& unit, const std::string& label) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1;
  throw std::runtime_error(label + ": unknown time_unit '" + unit + "'");
}

}  // namespace

double GoogleBenchmarkRun::seconds() const {
  double total = 0;
  for (const auto& e : entries) total += e.real_s;
  return total;
}

std::vector<std::pair<std::string, std::string>> google_benchmark_env(const fs::path& json_file,
                                                                      const std::string& filter) {
  std::vector<std::pair<std::string, std::string>> env{{"BENCHMARK_OUT", json_file.string()},
                                                       {"BENCHMARK_OUT_FORMAT", "json"}};
  if (!filter.empty()) env.push_back({"BENCHMARK_FILTER", filter});
  return env;
}

std::string google_benchmark_filter(const std::vector<std::string>& entries) {
  std::string alternatives;
  for (const std::string& name : entries) {
    if (!alternatives.empty()) alternatives += '|';
    for (char c : name) {
      // The library reads the filter as a POSIX extended or ECMAScript regex (as built):
      // a backslash before these means the character itself in both.
      if (std::string_view(".[]()*+?{}|^$\\").find(c) != std::string_view::npos) alternatives += '\\';
      alternatives += c;
    }
  }
  return "^(" + alternatives + ")$";
}

GoogleBenchmarkRun parse_google_benchmark(const json& document, const std::string& label) {
  if (!document.is_object() || !document.contains("benchmarks") || !document["benchmarks"].is_array())
    throw std::runtime_error(label + ": not Google Benchmark JSON output (no \"benchmarks\" array)");
  GoogleBenchmarkRun run;
  std::map<std::string, std::size_t> index;
  for (const json& b : document["benchmarks"]) {
    const std::string name = b.value("name", "");
    if (b.value("error_occurred", false))
      throw std::runtime_error(label + ": benchmark '" + name + "' failed: " + b.value("error_message", "(no message)"));
    // Aggregates (mean, median, stddev of repetitions) repeat what the iterations say.
    if (b.value("run_type", "iteration") != "iteration") continue;
    const std::string key = b.value("run_name", name);
    if (!b.contains("real_time") || !b["real_time"].is_number())
      throw std::runtime_error(label + ": benchmark '" + name + "' has no real_time");
    const double scale = unit_seconds(b.value("time_unit", "ns"), label);
    auto [at, fresh] = index.emplace(key, run.entries.size());
    if (fresh) run.entries.push_back({key, 0, 0, 0, 0});
    GoogleBenchmarkEntry& e = run.entries[at->second];
    // A running mean over repetitions.
    e.repetitions += 1;
    e.real_s += (b["real_time"].get<double>() * scale - e.real_s) / e.repetitions;
    e.cpu_s += (b.value("cpu_time", 0.0) * scale - e.cpu_s) / e.repetitions;
    e.iterations += b.value("iterations", 0LL);
  }
  if (run.entries.empty())
    throw std::runtime_error(label + ": the program ran no benchmark (a --benchmark_filter that matches nothing?)");
  return run;
}

GoogleBenchmarkRun read_google_benchmark(const fs::path& root, const fs::path& json_file) {
  std::string text;
  try {
    text = read_beneath(root, json_file, kMaxGoogleBenchmarkBytes);
  } catch (const BeneathError& e) {
    if (e.kind() == BeneathError::Kind::kMissing)
      throw std::runtime_error("no Google Benchmark output at " + json_file.string() +
                               ": the command did not run a Google Benchmark program, or it ignores BENCHMARK_OUT "
                               "(library older than 1.5?)");
    throw;  // a link, a FIFO, too large: the BeneathError says which
  }
  json document;
  try {
    document = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(json_file.string() + ": not JSON: " + e.what());
  }
  return parse_google_benchmark(document, json_file.string());
}

json to_json(const GoogleBenchmarkRun& run) {
  json entries = json::array();
  for (const auto& e : run.entries)
    entries.push_back({{"name", e.name}, {"real_s", e.real_s}, {"cpu_s", e.cpu_s},
                       {"iterations", e.iterations}, {"repetitions", e.repetitions}});
  return {{"benchmarks", entries}, {"seconds", run.seconds()}};
}

}  // namespace maxcode
