// Nsight Compute on the top kernels of a benchmark: the command line that profiles
// them, and the metrics read back from its CSV log, condensed per kernel into what a
// critique needs (docs/method.md "Critics"): throughput, occupancy and its
// limiter, stall reasons, bytes moved and the roofline floor. ncu never changes the
// GPU's clocks here (--clock-control none): times must match what the timer sees.
#pragma once

#include <cstddef>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace maxcode {

// An ncu log is some kilobytes per kernel launch profiled: one larger than this was not
// written by ncu (it is read from a workspace the benchmark could write).
inline constexpr std::size_t kMaxNcuLogBytes = 64u << 20;

// The metrics maxcode asks for (names verified on H100 with ncu 2025.3).
std::vector<std::string> ncu_metrics();

// argv for: <ncu> --clock-control none --target-processes all --kernel-name-base function
//   -k regex:^(name1|name2)$ --launch-skip S --launch-count C --metrics m1,m2,... --csv
//   --print-units base --log-file F sh -c <shell_command>
// The names are regex-escaped. No -k when `kernel_base_names` is empty (every kernel);
// no --launch-count when `launch_count` <= 0.
std::vector<std::string> ncu_argv(const std::string& ncu_path, const std::vector<std::string>& kernel_base_names,
                                  int launch_skip, int launch_count, const std::string& log_file,
                                  const std::string& shell_command);

// argv for the out-of-process witness (witness.h): <ncu> --clock-control none
//   --cache-control none --target-processes all --kernel-name-base function --metrics
//   gpu__time_duration.sum --csv --print-units base --log-file F sh -c <shell_command>.
// Every kernel of every process, no launch limits, one metric: a single pass, so no
// kernel is replayed.
std::vector<std::string> ncu_duration_argv(const std::string& ncu_path, const std::string& log_file,
                                           const std::string& shell_command);

struct NcuKernel {
  std::string name;  // "Kernel Name" as printed (demangled, with parameters)
  int launches = 0;  // profiled launches aggregated
  double duration_ns = 0;  // mean per launch, as are all other numbers
  double total_duration_ns = 0;  // the sum over launches (the witness's figure)
  // gpu__time_duration.sum of each launch, in launch order (ncu's "ID", then the order
  // of the log); a launch with no duration reported counts 0. The witness sets them
  // against the launches the timer counts (witness.h).
  std::vector<double> launch_ns;
  double dram_throughput_pct = 0, sm_throughput_pct = 0;
  double achieved_occupancy_pct = 0, theoretical_occupancy_pct = 0;
  // "registers" | "shared memory" | "warps" | "blocks": the launch__occupancy_limit_*
  // with the smallest value (ties: in that order); empty when none was reported.
  std::string occupancy_limiter;
  // Top 3 stall reasons by warps stalled per issue, descending, only > 0, named without
  // the metric's prefix and suffix ("long_scoreboard").
  std::vector<std::pair<std::string, double>> stalls;
  double dram_bytes = 0;  // read + write
  double flops = 0;       // fadd + fmul + 2 ffma + dadd + dmul + 2 dfma
  double fp64_flops = 0;  // the double-precision part of `flops`
  double peak_bytes_per_s = 0;       // DRAM bytes per cycle at peak * DRAM clock
  double peak_flops_per_s = 0;       // fp32: 2 * FFMA per cycle at peak * SM clock
  double peak_fp64_flops_per_s = 0;  // fp64: the same with DFMA
  int registers = 0;                 // per thread
  // The roofline floor of one launch: max(bytes / peak bandwidth, fp32 flops / fp32
  // peak + fp64 flops / fp64 peak), each term left out when its peak is unknown; and
  // the measured time against it (100 = at the hardware's limit).
  double floor_ns = 0;
  double roofline_pct = 0;  // 100 * floor_ns / duration_ns
};

// Parses the log of `ncu --csv --print-units base --log-file F`: "==PROF==" and other
// "==...==" lines are skipped; rows are grouped by "Kernel Name" (in order first seen)
// and averaged over launches ("ID"; each launch's duration is kept in `launch_ns`). Unknown metrics are ignored, missing ones stay 0
// (and values ncu prints as "n/a"). A malformed row throws std::runtime_error naming
// the line.
std::vector<NcuKernel> parse_ncu_csv(std::string_view log);

nlohmann::json to_json(const NcuKernel& kernel);

// One line for a critique: "812.3 us; DRAM 78% / SM 28% of peak; occupancy 76% achieved
// of 100% (limit: warps); stalls: long_scoreboard 12.1, ...; 185 MB moved; 45% of
// roofline". Parts with nothing measured are left out.
std::string describe_ncu(const NcuKernel& kernel);

// max(bytes / peak_bytes_per_s, flops / peak_flops_per_s) in seconds; a term whose
// peak is 0 is left out.
double roofline_floor_s(double bytes, double flops, double peak_bytes_per_s, double peak_flops_per_s);

// The fields of one CSV record (RFC 4180: quoted fields may hold commas and doubled
// quotes). Throws std::runtime_error on an unterminated quote or text after a closing
// quote. A record is one line: ncu never puts line breaks in a field.
std::vector<std::string> split_csv_record(std::string_view line);

}  // namespace maxcode
