#include "runner/evaluate/gpu/ptxas_report.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <utility>

#include "runner/util/text.h"

namespace maxcode {
namespace {

bool consume(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// One item of a comma-separated report line: "Used 12 registers", "used 0 barriers",
// "1024 bytes smem", "16+16 bytes smem" (old form: static+system, summed),
// "0 bytes spill stores". Returns the number and leaves the unit ("registers",
// "bytes smem") in `item`.
std::optional<long> item_value(std::string_view& item) {
  item = trim(item, kLineBlanks);
  if (!consume(item, "Used ")) consume(item, "used ");
  long total = 0;
  bool any = false;
  for (;;) {
    long v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc()) break;
    total += v;
    any = true;
    item.remove_prefix(static_cast<std::size_t>(end - item.data()));
    if (!consume(item, "+")) break;
  }
  if (!any) return std::nullopt;
  item = trim(item, kLineBlanks);
  return total;
}

template <typename Fn>
void for_each_item(std::string_view line, Fn&& fn) {
  while (!line.empty()) {
    std::size_t comma = line.find(',');
    std::string_view item = line.substr(0, comma);
    if (auto v = item_value(item)) fn(*v, item);
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
}

// "'_Z4racyPf' for 'sm_90'" -> name and arch.
std::optional<std::pair<std::string, std::string>> entry_of(std::string_view rest) {
  if (!consume(rest, "'")) return std::nullopt;
  std::size_t close = rest.find('\'');
  if (close == std::string_view::npos || close == 0) return std::nullopt;
  std::string name(rest.substr(0, close));
  rest.remove_prefix(close + 1);
  std::string arch;
  if (std::size_t open = rest.find(" for '"); open != std::string_view::npos) {
    rest.remove_prefix(open + 6);
    arch = std::string(rest.substr(0, rest.find('\'')));
  }
  return std::pair{std::move(name), std::move(arch)};
}

std::string bytes(long n) { return std::to_string(n) + " B"; }

// ptxas's report read line by line: each entry function's resources, the last report of
// a (kernel, arch) kept.
class PtxasReader {
 public:
  void line(std::string_view line) {
    // Found anywhere in the line: a build tool may prefix it.
    if (std::size_t at = line.find("ptxas info"); at != std::string_view::npos) {
      std::string_view msg = line.substr(at);
      std::size_t colon = msg.find(':');
      if (colon != std::string_view::npos) info(trim(msg.substr(colon + 1), kLineBlanks));
    } else if (line.find("bytes stack frame") != std::string_view::npos && current_ &&
               properties_of_ == current_->kernel) {
      for_each_item(line, [&](long v, std::string_view unit) {
        if (unit == "bytes stack frame")
          current_->stack_bytes = v;
        else if (unit == "bytes spill stores")
          current_->spill_store_bytes = v;
        else if (unit == "bytes spill loads")
          current_->spill_load_bytes = v;
      });
    }
  }

  std::vector<KernelResources> finish() {
    flush();
    return std::move(out_);
  }

 private:
  void info(std::string_view msg) {
    if (consume(msg, "Compiling entry function ")) {
      flush();
      properties_of_.clear();
      used_seen_ = false;
      if (auto entry = entry_of(msg)) {
        current_.emplace();
        current_->kernel = std::move(entry->first);
        current_->arch = std::move(entry->second);
      }
    } else if (msg.starts_with("Compiling ")) {
      flush();  // a non-entry function: what follows is not a kernel's
    } else if (consume(msg, "Function properties for ")) {
      properties_of_ = std::string(trim(msg, kLineBlanks));
    } else if (msg.starts_with("Used ") && current_ && !used_seen_) {
      used_seen_ = true;
      for_each_item(msg, [&](long v, std::string_view unit) {
        if (unit == "registers")
          current_->registers = static_cast<int>(v);
        else if (unit == "barriers")
          current_->barriers = static_cast<int>(v);
        else if (unit == "bytes smem")
          current_->shared_bytes = v;
      });
    }
  }

  void flush() {
    if (!current_) return;
    auto key = std::pair{current_->kernel, current_->arch};
    if (auto it = seen_.find(key); it != seen_.end()) {
      out_[it->second] = std::move(*current_);
    } else {
      seen_.emplace(std::move(key), out_.size());
      out_.push_back(std::move(*current_));
    }
    current_.reset();
  }

  std::vector<KernelResources> out_;
  std::map<std::pair<std::string, std::string>, std::size_t> seen_;  // (kernel, arch) -> index
  std::optional<KernelResources> current_;
  // The function the last "Function properties for" named: the stack/spill line that
  // follows belongs to the current kernel only when it is that kernel, not a device
  // function it calls. The "Used" line is the kernel's own (callees included) even when
  // callees' properties come between, so the first one after the entry line counts.
  std::string properties_of_;
  bool used_seen_ = false;
};

}  // namespace

std::vector<KernelResources> parse_ptxas_report(std::string_view output) {
  PtxasReader reader;
  while (!output.empty()) {
    std::size_t nl = output.find('\n');
    reader.line(output.substr(0, nl));
    output.remove_prefix(nl == std::string_view::npos ? output.size() : nl + 1);
  }
  return reader.finish();
}

nlohmann::json to_json(const KernelResources& k) {
  return {{"kernel", k.kernel},
          {"arch", k.arch},
          {"registers", k.registers},
          {"barriers", k.barriers},
          {"shared_bytes", k.shared_bytes},
          {"stack_bytes", k.stack_bytes},
          {"spill_store_bytes", k.spill_store_bytes},
          {"spill_load_bytes", k.spill_load_bytes}};
}

std::string describe_resources(const std::vector<KernelResources>& kernels,
                               const std::function<std::string(const std::string&)>& pretty) {
  std::string out;
  for (const auto& k : kernels) {
    if (!out.empty()) out += '\n';
    out += pretty ? pretty(k.kernel) : k.kernel;
    if (!k.arch.empty()) out += " (" + k.arch + ")";
    out += ": " + std::to_string(k.registers) + " registers";
    if (k.shared_bytes > 0) out += ", " + bytes(k.shared_bytes) + " shared";
    if (k.stack_bytes > 0) out += ", " + bytes(k.stack_bytes) + " stack";
    if (k.spill_store_bytes > 0 || k.spill_load_bytes > 0) {
      out += ", " + bytes(std::max(k.spill_store_bytes, k.spill_load_bytes)) + " spilled (stores " +
             bytes(k.spill_store_bytes) + ", loads " + bytes(k.spill_load_bytes) + ")";
    } else {
      out += ", no spills";
    }
  }
  return out;
}

}  // namespace maxcode
