#include "runner/evaluate/gpu/ncu.h"
#include "runner/util/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

namespace maxcode {
namespace {

constexpr std::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr std::string_view kStallSuffix = "_per_issue_active.ratio";
// Not "selected": a selected warp is issuing, not stalled.
constexpr const char* kStallReasons[] = {
    "barrier",         "branch_resolving", "dispatch_stall",     "drain",     "imc_miss",
    "lg_throttle",     "long_scoreboard",  "math_pipe_throttle", "membar",    "mio_throttle",
    "misc",            "no_instruction",   "not_selected",       "short_scoreboard", "sleeping",
    "tex_throttle",    "wait"};

std::string stall_metric(std::string_view reason) {
  return std::string(kStallPrefix) + std::string(reason) + std::string(kStallSuffix);
}

std::string regex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// "1,978,326,598.94" -> 1978326598.94; "n/a" and other text -> false.
bool parse_number(std::string_view text, double& value) {
  std::string digits;
  for (char c : text)
    if (c != ',') digits += c;
  if (digits.empty()) return false;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return ec == std::errc() && end == digits.data() + digits.size();
}

// Three significant digits with a unit from `units` (each 1000 times the last).
std::string scaled(double v, std::initializer_list<const char*> units) {
  auto unit = units.begin();
  while (v >= 999.95 && unit + 1 != units.end()) v /= 1000, ++unit;
  return format_numbers(v >= 99.95 ? "%.0f" : v >= 9.995 ? "%.1f" : "%.2f", v) + " " + *unit;
}

std::runtime_error csv_error(std::size_t line, const std::string& what) {
  return std::runtime_error("ncu CSV line " + std::to_string(line) + ": " + what);
}

}  // namespace

std::vector<std::string> ncu_metrics() {
  std::vector<std::string> metrics = {
      "gpu__time_duration.sum",
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__warps_active.avg.pct_of_peak_sustained_active",  // achieved occupancy
      "sm__maximum_warps_per_active_cycle_pct",             // theoretical occupancy
      "launch__occupancy_limit_registers",
      "launch__occupancy_limit_shared_mem",
      "launch__occupancy_limit_warps",
      "launch__occupancy_limit_blocks",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "dram__bytes.sum.peak_sustained",
      "dram__cycles_elapsed.avg.per_second",
      "sm__cycles_elapsed.avg.per_second",
      "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
      "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
      "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
      "launch__registers_per_thread",
  };
  for (const char* reason : kStallReasons) metrics.push_back(stall_metric(reason));
  return metrics;
}

std::vector<std::string> ncu_argv(const std::string& ncu_path, const std::vector<std::string>& kernel_base_names,
                                  int launch_skip, int launch_count, const std::string& log_file,
                                  const std::string& shell_command) {
  std::vector<std::string> argv = {ncu_path, "--clock-control", "none", "--target-processes", "all",
                                   "--kernel-name-base", "function"};
  if (!kernel_base_names.empty()) {
    // Whole identifiers anywhere in the name: ncu's "function" base may keep a
    // namespace or template arguments that the caller's name lacks.
    std::string regex = "regex:(^|[^A-Za-z0-9_])(";
    for (std::size_t i = 0; i < kernel_base_names.size(); ++i)
      regex += (i ? "|" : "") + regex_escape(kernel_base_names[i]);
    argv.insert(argv.end(), {"-k", regex + ")([^A-Za-z0-9_]|$)"});
  }
  argv.insert(argv.end(), {"--launch-skip", std::to_string(std::max(0, launch_skip))});
  if (launch_count > 0) argv.insert(argv.end(), {"--launch-count", std::to_string(launch_count)});
  std::string metrics;
  for (const auto& m : ncu_metrics()) metrics += (metrics.empty() ? "" : ",") + m;
  argv.insert(argv.end(), {"--metrics", metrics, "--csv", "--print-units", "base", "--log-file", log_file, "sh",
                           "-c", shell_command});
  return argv;
}

std::vector<std::string> ncu_duration_argv(const std::string& ncu_path, const std::string& log_file,
                                           const std::string& shell_command) {
  // Caches are left as the previous kernel left them (ncu flushes them by default), as
  // in the timed runs whose records the witness checks.
  return {ncu_path,          "--clock-control", "none",      "--cache-control",        "none",
          "--target-processes", "all",           "--kernel-name-base", "function",     "--metrics",
          "gpu__time_duration.sum", "--csv",     "--print-units", "base",             "--log-file",
          log_file,          "sh",              "-c",        shell_command};
}

std::vector<std::string> split_csv_record(std::string_view line) {
  std::vector<std::string> fields;
  std::size_t i = 0;
  const std::size_t n = line.size();
  for (;;) {
    std::string field;
    if (i < n && line[i] == '"') {
      for (++i;; ++i) {
        if (i >= n) throw std::runtime_error("unterminated quoted field");
        if (line[i] != '"') {
          field += line[i];
        } else if (i + 1 < n && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          break;
        }
      }
      ++i;  // the closing quote
      if (i < n && line[i] != ',') throw std::runtime_error("text after a closing quote");
    } else {
      std::size_t comma = std::min(line.find(',', i), n);
      field = std::string(line.substr(i, comma - i));
      if (field.find('"') != std::string::npos) throw std::runtime_error("quote inside an unquoted field");
      i = comma;
    }
    fields.push_back(std::move(field));
    if (i >= n) return fields;
    ++i;  // the comma
  }
}

namespace {

// One kernel's rows of ncu's CSV, as read.
struct KernelRows {
  struct Sum {
    double total = 0;
    int count = 0;
  };
  std::string name;
  std::set<std::pair<std::string, std::string>> launches;  // (process, ID)
  std::map<std::string, Sum> metrics;
  // Each launch's duration: (numeric ID, order first seen in the log) -> ns.
  std::map<std::pair<long long, std::size_t>, double> durations;
  std::map<std::pair<std::string, std::string>, std::pair<long long, std::size_t>> launch_key;

  double mean(const std::string& metric) const {
    auto it = metrics.find(metric);
    return it == metrics.end() ? 0.0 : it->second.total / it->second.count;
  }
};

// ncu's CSV, one row per (launch, metric), grouped by kernel. The first quoted line is
// the header (a second process repeats it); ncu's own messages are skipped.
class NcuCsv {
 public:
  explicit NcuCsv(std::string_view log) {
    std::size_t line_no = 0;
    while (!log.empty()) {
      std::size_t nl = log.find('\n');
      std::string_view line = log.substr(0, nl);
      log.remove_prefix(nl == std::string_view::npos ? log.size() : nl + 1);
      ++line_no;
      if (line.ends_with('\r')) line.remove_suffix(1);
      if (line.empty() || line.starts_with("==")) continue;  // ==PROF==, ==WARNING==, ==ERROR==
      // ncu's messages may run over several lines; its CSV lines always start quoted.
      if (!line.starts_with('"')) continue;
      std::vector<std::string> fields;
      try {
        fields = split_csv_record(line);
      } catch (const std::runtime_error& e) {
        throw csv_error(line_no, e.what());
      }
      if (header_.empty())
        read_header(std::move(fields), line_no);
      else if (fields != header_)
        add_row(fields, line_no);
    }
  }
  const std::vector<KernelRows>& kernels() const { return kernels_; }

 private:
  void read_header(std::vector<std::string> fields, std::size_t line_no) {
    header_ = std::move(fields);
    auto column = [&](const char* name) {
      auto it = std::find(header_.begin(), header_.end(), name);
      return it == header_.end() ? -1 : static_cast<int>(it - header_.begin());
    };
    col_id_ = column("ID");
    col_pid_ = column("Process ID");
    col_kernel_ = column("Kernel Name");
    col_metric_ = column("Metric Name");
    col_value_ = column("Metric Value");
    for (auto [col, name] : {std::pair{col_id_, "ID"},
                             {col_kernel_, "Kernel Name"},
                             {col_metric_, "Metric Name"},
                             {col_value_, "Metric Value"}})
      if (col < 0) throw csv_error(line_no, std::string("the header has no \"") + name + "\" column");
  }

  void add_row(const std::vector<std::string>& fields, std::size_t line_no) {
    if (fields.size() != header_.size())
      throw csv_error(line_no,
                      std::to_string(fields.size()) + " fields, the header has " + std::to_string(header_.size()));
    const std::string& name = fields[col_kernel_];
    auto [it, fresh] = index_.emplace(name, kernels_.size());
    if (fresh) kernels_.push_back({name, {}, {}, {}, {}});
    KernelRows& k = kernels_[it->second];
    const std::pair<std::string, std::string> launch{col_pid_ >= 0 ? fields[col_pid_] : "", fields[col_id_]};
    k.launches.insert(launch);
    auto [key, first_row] = k.launch_key.emplace(launch, std::pair<long long, std::size_t>{0, line_no});
    if (first_row) {
      long long id = -1;
      const std::string& text = fields[col_id_];
      if (std::from_chars(text.data(), text.data() + text.size(), id).ec != std::errc{}) id = -1;
      key->second.first = id;
      k.durations.emplace(key->second, 0.0);
    }
    double value = 0;
    if (!parse_number(fields[col_value_], value)) return;  // "n/a": as if missing
    if (fields[col_metric_] == "gpu__time_duration.sum") k.durations[key->second] += value;
    KernelRows::Sum& sum = k.metrics[fields[col_metric_]];
    sum.total += value;
    sum.count += 1;
  }

  std::vector<std::string> header_;
  int col_id_ = -1, col_pid_ = -1, col_kernel_ = -1, col_metric_ = -1, col_value_ = -1;
  std::vector<KernelRows> kernels_;
  std::map<std::string, std::size_t> index_;
};

// One kernel's figures from its rows: means over its launches, the occupancy limiter,
// the top stalls, the work counted and the roofline floor.
NcuKernel summarize(const KernelRows& acc) {
  auto has = [&](const std::string& m) { return acc.metrics.count(m) > 0; };
  auto mean = [&](const std::string& m) { return acc.mean(m); };
  auto op = [&](const char* o) {
    return mean(std::string("smsp__sass_thread_inst_executed_op_") + o + "_pred_on.sum");
  };

  NcuKernel k;
  k.name = acc.name;
  k.launches = static_cast<int>(acc.launches.size());
  k.duration_ns = mean("gpu__time_duration.sum");
  if (auto d = acc.metrics.find("gpu__time_duration.sum"); d != acc.metrics.end())
    k.total_duration_ns = d->second.total;
  for (const auto& [order, ns] : acc.durations) k.launch_ns.push_back(ns);
  k.dram_throughput_pct = mean("dram__throughput.avg.pct_of_peak_sustained_elapsed");
  k.sm_throughput_pct = mean("sm__throughput.avg.pct_of_peak_sustained_elapsed");
  k.achieved_occupancy_pct = mean("sm__warps_active.avg.pct_of_peak_sustained_active");
  k.theoretical_occupancy_pct = mean("sm__maximum_warps_per_active_cycle_pct");

  double limit = 0;
  for (auto [metric, label] : {std::pair{"launch__occupancy_limit_registers", "registers"},
                               {"launch__occupancy_limit_shared_mem", "shared memory"},
                               {"launch__occupancy_limit_warps", "warps"},
                               {"launch__occupancy_limit_blocks", "blocks"}}) {
    if (!has(metric)) continue;
    if (k.occupancy_limiter.empty() || mean(metric) < limit) k.occupancy_limiter = label, limit = mean(metric);
  }

  for (const char* reason : kStallReasons)
    if (double ratio = mean(stall_metric(reason)); ratio > 0) k.stalls.emplace_back(reason, ratio);
  std::stable_sort(k.stalls.begin(), k.stalls.end(), [](auto& a, auto& b) { return a.second > b.second; });
  if (k.stalls.size() > 3) k.stalls.resize(3);

  k.dram_bytes = mean("dram__bytes_read.sum") + mean("dram__bytes_write.sum");
  double fp32 = op("fadd") + op("fmul") + 2 * op("ffma");
  k.fp64_flops = op("dadd") + op("dmul") + 2 * op("dfma");
  k.flops = fp32 + k.fp64_flops;
  k.peak_bytes_per_s = mean("dram__bytes.sum.peak_sustained") * mean("dram__cycles_elapsed.avg.per_second");
  double sm_hz = mean("sm__cycles_elapsed.avg.per_second");
  k.peak_flops_per_s = 2 * mean("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained") * sm_hz;
  k.peak_fp64_flops_per_s = 2 * mean("sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained") * sm_hz;
  k.registers = static_cast<int>(std::lround(mean("launch__registers_per_thread")));

  // fp32 and fp64 run on different units with different peaks: their times add up.
  double compute_s =
      roofline_floor_s(0, fp32, 0, k.peak_flops_per_s) + roofline_floor_s(0, k.fp64_flops, 0, k.peak_fp64_flops_per_s);
  k.floor_ns = 1e9 * std::max(roofline_floor_s(k.dram_bytes, 0, k.peak_bytes_per_s, 0), compute_s);
  k.roofline_pct = k.duration_ns > 0 ? 100 * k.floor_ns / k.duration_ns : 0;
  return k;
}

}  // namespace

std::vector<NcuKernel> parse_ncu_csv(std::string_view log) {
  std::vector<NcuKernel> out;
  const NcuCsv csv(log);  // named: a temporary would end before the loop does
  for (const KernelRows& rows : csv.kernels()) out.push_back(summarize(rows));
  return out;
}

double roofline_floor_s(double bytes, double flops, double peak_bytes_per_s, double peak_flops_per_s) {
  double memory = peak_bytes_per_s > 0 ? bytes / peak_bytes_per_s : 0;
  double compute = peak_flops_per_s > 0 ? flops / peak_flops_per_s : 0;
  return std::max(memory, compute);
}

nlohmann::json to_json(const NcuKernel& k) {
  nlohmann::json stalls = nlohmann::json::array();
  for (const auto& [reason, ratio] : k.stalls) stalls.push_back({{"reason", reason}, {"ratio", ratio}});
  return {{"name", k.name},
          {"launches", k.launches},
          {"duration_ns", k.duration_ns},
          {"dram_throughput_pct", k.dram_throughput_pct},
          {"sm_throughput_pct", k.sm_throughput_pct},
          {"achieved_occupancy_pct", k.achieved_occupancy_pct},
          {"theoretical_occupancy_pct", k.theoretical_occupancy_pct},
          {"occupancy_limiter", k.occupancy_limiter},
          {"stalls", stalls},
          {"dram_bytes", k.dram_bytes},
          {"flops", k.flops},
          {"fp64_flops", k.fp64_flops},
          {"peak_bytes_per_s", k.peak_bytes_per_s},
          {"peak_flops_per_s", k.peak_flops_per_s},
          {"peak_fp64_flops_per_s", k.peak_fp64_flops_per_s},
          {"registers", k.registers},
          {"floor_ns", k.floor_ns},
          {"roofline_pct", k.roofline_pct}};
}

std::string describe_ncu(const NcuKernel& k) {
  std::vector<std::string> parts;
  if (k.duration_ns > 0) parts.push_back(scaled(k.duration_ns, {"ns", "us", "ms", "s"}));
  if (k.dram_throughput_pct > 0 || k.sm_throughput_pct > 0)
    parts.push_back(format_numbers("DRAM %.0f%%", k.dram_throughput_pct) + format_numbers(" / SM %.0f%% of peak", k.sm_throughput_pct));
  if (k.achieved_occupancy_pct > 0 || k.theoretical_occupancy_pct > 0) {
    parts.push_back(format_numbers("occupancy %.0f%% achieved", k.achieved_occupancy_pct) +
                    format_numbers(" of %.0f%%", k.theoretical_occupancy_pct) +
                    (k.occupancy_limiter.empty() ? "" : " (limit: " + k.occupancy_limiter + ")"));
  }
  if (!k.stalls.empty()) {
    std::string s = "stalls:";
    for (std::size_t i = 0; i < k.stalls.size(); ++i)
      s += (i ? ", " : " ") + k.stalls[i].first + format_numbers(" %.1f", k.stalls[i].second);
    parts.push_back(s);
  }
  if (k.dram_bytes > 0) parts.push_back(scaled(k.dram_bytes, {"B", "KB", "MB", "GB", "TB"}) + " moved");
  if (k.floor_ns > 0 && k.duration_ns > 0) parts.push_back(format_numbers("%.0f%% of roofline", k.roofline_pct));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace maxcode
