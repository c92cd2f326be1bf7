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

// The file, line by line: "maxcode-sampler 1", header lines ("key value"), "maps", the
// memory map, "end", "stacks", one stack per line ("count pc sp-word caller..."),
// "end". A file cut short (the process died while writing) is read as far as it goes.
class SamplerFileReader {
 public:
  explicit SamplerFileReader(const std::string& label) : label_(label) {
    p_.source = label;
    p_.format = "maxcode-sampler";
    p_.sp_word = true;
  }

  AddressProfile read(std::string_view text) {
    std::size_t begin = 0;
    while (begin < text.size() && section_ != Section::kDone) {
      std::size_t end = text.find('\n', begin);
      if (end == std::string_view::npos) break;  // an unfinished last line: cut short
      std::string_view line = text.substr(begin, end - begin);
      begin = end + 1;
      ++line_number_;
      if (line_number_ == 1) {
        if (line != "maxcode-sampler 1") fail(label_, 1, "not a maxcode sampler file (expected 'maxcode-sampler 1')");
        continue;
      }
      read_line(line);
    }
    if (line_number_ == 0) fail(label_, 1, "empty file");
    return finish();
  }

 private:
  enum class Section { kHeader, kMaps, kBetween, kStacks, kDone };

  void read_line(std::string_view line) {
    switch (section_) {
      case Section::kHeader:
        if (line == "maps")
          section_ = Section::kMaps;
        else
          read_header(line);
        break;
      case Section::kMaps:
        if (line == "end")
          section_ = Section::kBetween;
        else
          p_.maps.append(line).push_back('\n');
        break;
      case Section::kBetween:
        if (line != "stacks") fail(label_, line_number_, "expected 'stacks'");
        section_ = Section::kStacks;
        break;
      case Section::kStacks:
        if (line == "end")
          section_ = Section::kDone;
        else
          read_stack(line);
        break;
      case Section::kDone:
        break;
    }
  }

  void read_header(std::string_view line) {
    const std::size_t space = line.find(' ');
    const std::string_view key = line.substr(0, space);
    const std::string_view value = space == std::string_view::npos ? "" : line.substr(space + 1);
    std::uint64_t number = 0;
    auto need_number = [&] {
      if (!parse_u64(value, number)) fail(label_, line_number_, "'" + std::string(key) + "' needs a number");
      return number;
    };
    if (key == "pid")
      p_.pid = static_cast<long>(need_number());
    else if (key == "ppid")
      p_.ppid = static_cast<long>(need_number());
    else if (key == "exe")
      p_.exe = std::string(value);
    else if (key == "interval_us")
      interval_us_ = need_number();
    else if (key == "status")
      p_.status = std::string(value);
    else if (key == "samples")
      p_.samples = need_number();
    else if (key == "dropped")
      p_.dropped = need_number();
    else if (key == "cpu_ns")
      p_.cpu_ns = static_cast<double>(need_number()), have_cpu_ = true;
    else if (key == "wall_ns")
      p_.wall_ns = static_cast<double>(need_number());
    else if (key.empty())
      fail(label_, line_number_, "empty line in the header");
    // Other keys: written by a newer sampler; nothing here needs them.
  }

  void read_stack(std::string_view line) {
    AddressStack stack;
    std::size_t at = 0;
    int field = 0;
    while (at <= line.size()) {
      std::size_t next = line.find(' ', at);
      if (next == std::string_view::npos) next = line.size();
      std::string_view token = line.substr(at, next - at);
      std::uint64_t value = 0;
      if (!parse_u64(token, value, field == 0 ? 10 : 16))
        fail(label_, line_number_,
             field == 0 ? "a stack line starts with its count" : "bad address '" + std::string(token) + "'");
      if (field == 0)
        stack.count = value;
      else
        stack.pcs.push_back(value);
      ++field;
      at = next + 1;
    }
    if (stack.pcs.size() < 2) fail(label_, line_number_, "a stack needs the pc and the word at the stack pointer");
    p_.stacks.push_back(std::move(stack));
  }

  AddressProfile finish() {
    p_.truncated = section_ != Section::kDone;
    std::uint64_t recorded = 0;
    for (const auto& s : p_.stacks) recorded += s.count;
    if (p_.samples < recorded) p_.samples = recorded + p_.dropped;
    // The kernel delivers CPU-time signals on its tick, whatever interval was asked for:
    // the CPU time measured by the process, spread over its samples, is the true weight.
    if (have_cpu_ && p_.samples > 0)
      p_.ns_per_sample = p_.cpu_ns / static_cast<double>(p_.samples);
    else
      p_.ns_per_sample = static_cast<double>(interval_us_ ? interval_us_ : 1000) * 1000.0;
    if (!have_cpu_) p_.cpu_ns = p_.ns_per_sample * static_cast<double>(p_.samples);
    return std::move(p_);
  }

  const std::string& label_;
  AddressProfile p_;
  Section section_ = Section::kHeader;
  std::uint64_t interval_us_ = 0;
  bool have_cpu_ = false;
  std::size_t line_number_ = 0;
};

}  // namespace

AddressProfile parse_sampler_file(std::string_view text, const std::string& label) {
  return SamplerFileReader(label).read(text);
}

AddressProfile read_sampler_file(const std::filesystem::path& path) {
  return parse_sampler_file(read_text(path), path.string());
}

}  // namespace maxcode
