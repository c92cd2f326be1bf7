#include "runner/profile/sampler_file.h"

#include <charconv>

#include "runner/util/files.h"

namespace maxcode {

namespace {

[[noreturn]] void fail(const std::string& label, std::size_t line, const std::string& problem) {
  throw ProfileFormatError(label + ":" + std::to_string(line) + ": " + problem);
}

bool parse_u64(std::string_view text, std::uint64_t& value, int base = 10) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

AddressProfile parse_sampler_file(std::string_view text, const std::string& label) {
  AddressProfile p;
  p.source = label;
  p.format = "maxcode-sampler";
  p.sp_word = true;
  enum class Section { kHeader, kMaps, kBetween, kStacks, kDone } section = Section::kHeader;
  std::uint64_t interval_us = 0;
  bool have_cpu = false;
  std::size_t line_number = 0, begin = 0;
  while (begin < text.size() && section != Section::kDone) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) break;  // an unfinished last line: cut short
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (line_number == 1) {
      if (line != "maxcode-sampler 1") fail(label, 1, "not a maxcode sampler file (expected 'maxcode-sampler 1')");
      continue;
    }
    switch (section) {
      case Section::kHeader: {
        if (line == "maps") {
          section = Section::kMaps;
          break;
        }
        const std::size_t space = line.find(' ');
        const std::string_view key = line.substr(0, space);
        const std::string_view value = space == std::string_view::npos ? "" : line.substr(space + 1);
        std::uint64_t number = 0;
        auto need_number = [&] {
          if (!parse_u64(value, number)) fail(label, line_number, "'" + std::string(key) + "' needs a number");
          return number;
        };
        if (key == "pid") p.pid = static_cast<long>(need_number());
        else if (key == "ppid") p.ppid = static_cast<long>(need_number());
        else if (key == "exe") p.exe = std::string(value);
        else if (key == "interval_us") interval_us = need_number();
        else if (key == "status") p.status = std::string(value);
        else if (key == "samples") p.samples = need_number();
        else if (key == "dropped") p.dropped = need_number();
        else if (key == "cpu_ns") p.cpu_ns = static_cast<double>(need_number()), have_cpu = true;
        else if (key == "wall_ns") p.wall_ns = static_cast<double>(need_number());
        else if (key.empty()) fail(label, line_number, "empty line in the header");
        // Other keys: written by a newer sampler; nothing here needs them.
        break;
      }
      case Section::kMaps:
        if (line == "end") section = Section::kBetween;
        else p.maps.append(line).push_back('\n');
        break;
      case Section::kBetween:
        if (line != "stacks") fail(label, line_number, "expected 'stacks'");
        section = Section::kStacks;
        break;
      case Section::kStacks: {
        if (line == "end") {
          section = Section::kDone;
          break;
        }
        AddressStack stack;
        std::size_t at = 0;
        int field = 0;
        while (at <= line.size()) {
          std::size_t next = line.find(' ', at);
          if (next == std::string_view::npos) next = line.size();
          std::string_view token = line.substr(at, next - at);
          std::uint64_t value = 0;
          if (!parse_u64(token, value, field == 0 ? 10 : 16))
            fail(label, line_number, field == 0 ? "a stack line starts with its count"
                                                : "bad address '" + std::string(token) + "'");
          if (field == 0) stack.count = value;
          else stack.pcs.push_back(value);
          ++field;
          at = next + 1;
        }
        if (stack.pcs.size() < 2) fail(label, line_number, "a stack needs the pc and the word at the stack pointer");
        p.stacks.push_back(std::move(stack));
        break;
      }
      case Section::kDone:
        break;
    }
  }
  if (line_number == 0) fail(label, 1, "empty file");
  p.truncated = section != Section::kDone;
  std::uint64_t recorded = 0;
  for (const auto& s : p.stacks) recorded += s.count;
  if (p.samples < recorded) p.samples = recorded + p.dropped;
  // The kernel delivers CPU-time signals on its tick, whatever interval was asked for:
  // the CPU time measured by the process, spread over its samples, is the true weight.
  if (have_cpu && p.samples > 0) p.ns_per_sample = p.cpu_ns / static_cast<double>(p.samples);
  else p.ns_per_sample = static_cast<double>(interval_us ? interval_us : 1000) * 1000.0;
  if (!have_cpu) p.cpu_ns = p.ns_per_sample * static_cast<double>(p.samples);
  return p;
}

AddressProfile read_sampler_file(const std::filesystem::path& path) {
  return parse_sampler_file(read_text(path), path.string());
}

}  // namespace maxcode
