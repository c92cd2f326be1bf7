#include "runner/profile/perf_import.h"

#include <charconv>
#include <map>
#include <vector>

#include "runner/util/files.h"
#include "runner/util/names.h"
#include "runner/util/text.h"

namespace maxcode {

namespace {

std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t begin = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > begin) tokens.push_back(line.substr(begin, i - begin));
  }
  return tokens;
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_timestamp(std::string_view s) {  // "12345.678901:"
  if (s.size() < 3 || s.back() != ':') return false;
  s.remove_suffix(1);
  std::size_t dot = s.find('.');
  return dot != std::string_view::npos && all_digits(s.substr(0, dot)) && all_digits(s.substr(dot + 1));
}

// "55d5c1a0b1e9 hot+0x49 (/path/bench)" -> frame; false when it is not one.
bool parse_frame(std::string_view line, CodeFrame& frame) {
  line = trim(line, kLineBlanks);
  std::size_t space = line.find(' ');
  std::string_view address = line.substr(0, space);
  if (address.empty() || address.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos) return false;
  std::string_view rest = space == std::string_view::npos ? "" : trim(line.substr(space + 1), kLineBlanks);
  std::string_view dso;
  if (!rest.empty() && rest.back() == ')') {
    std::size_t open = rest.rfind(" (");
    if (open == std::string_view::npos && rest.front() == '(') open = 0;
    else if (open != std::string_view::npos) ++open;
    if (open != std::string_view::npos) {
      dso = rest.substr(open + 1, rest.size() - open - 2);
      rest = trim(rest.substr(0, open), kLineBlanks);
    }
  }
  // "hot+0x49" -> "hot"; perf leaves "[unknown]" where it found no symbol.
  if (std::size_t plus = rest.rfind("+0x"); plus != std::string_view::npos &&
                                              rest.substr(plus + 3).find_first_not_of("0123456789abcdef") ==
                                                  std::string_view::npos)
    rest = rest.substr(0, plus);
  frame = CodeFrame{};
  frame.module = dso == "[unknown]" ? "" : std::string(dso);
  if (rest.empty() || rest == "[unknown]") {
    frame.function = (dso.empty() || dso == "[unknown]" ? std::string("[unknown]") : std::string(dso)) + "+0x" +
                     std::string(address);
  } else {
    frame.function = demangle(rest);
    if (frame.function != rest) frame.symbol = std::string(rest);
  }
  return true;
}

// "histogram.cpp:14" (perf script -F +srcline)
bool parse_srcline(std::string_view line, std::string& file, int& number) {
  line = trim(line, kLineBlanks);
  std::size_t colon = line.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || !all_digits(line.substr(colon + 1))) return false;
  file = std::string(line.substr(0, colon));
  std::from_chars(line.data() + colon + 1, line.data() + line.size(), number);
  return true;
}

// `perf script` output, sample by sample: a header line ("comm pid time: [period]
// event: [ip sym (dso)]"), then the call chain's frames, indented, each perhaps followed
// by its source line. Only the first event's samples are ranked; the others are counted.
class PerfScriptReader {
 public:
  explicit PerfScriptReader(const std::string& label) : label_(label) {}

  CallStacks read(std::string_view text) {
    std::size_t begin = 0;
    while (begin < text.size()) {
      std::size_t end = text.find('\n', begin);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(begin, end - begin);
      begin = end + 1;
      ++line_number_;
      if (trim(line, kLineBlanks).empty())
        flush();
      else if (line.front() == '#')
        continue;  // perf script --header
      else if (line.front() != ' ' && line.front() != '\t')
        read_sample_line(line);
      else
        read_frame_line(line);
    }
    flush();
    if (first_event_.empty()) throw ProfileFormatError(label_ + ":1: no samples (is this `perf script` output?)");
    for (const auto& [event, count] : other_events_)
      out_.warnings.push_back(label_ + ": " + std::to_string(count) + " samples of " + event + " left out (ranked by " +
                              first_event_ + ")");
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw ProfileFormatError(label_ + ":" + std::to_string(line_number_) + ": " + problem);
  }

  void flush() {
    if (have_sample_ && keep_ && !frames_.empty()) {
      CallStack stack;
      stack.weight = weight_;
      stack.samples = 1;
      for (const auto& f : frames_) stack.frames.push_back(out_.intern(f));
      out_.stacks.push_back(std::move(stack));
    }
    have_sample_ = false;
    frames_.clear();
  }

  void read_sample_line(std::string_view line) {
    flush();
    auto tokens = split_spaces(line);
    std::size_t event_at = tokens.size();
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (!is_timestamp(tokens[i])) continue;
      std::size_t e = i + 1;
      if (e < tokens.size() && all_digits(tokens[e])) ++e;
      if (e < tokens.size() && tokens[e].back() == ':') event_at = e;
      break;
    }
    if (event_at == tokens.size()) fail("not a perf script sample line (expected 'comm pid time: [period] event:')");
    std::string event(tokens[event_at].substr(0, tokens[event_at].size() - 1));
    const bool has_period = all_digits(tokens[event_at - 1]);  // the token before is a timestamp otherwise
    weight_ = 1;
    if (has_period) {
      const std::string_view period = tokens[event_at - 1];
      std::from_chars(period.data(), period.data() + period.size(), weight_);
    }
    if (first_event_.empty()) {
      first_event_ = event;
      const std::string base = event.substr(0, event.find(':'));
      const bool timed = base == "cpu-clock" || base == "task-clock";  // periods in ns
      out_.unit = !has_period ? "samples" : timed ? "ns" : base;
    }
    keep_ = event == first_event_;
    if (!keep_) ++other_events_[event];
    have_sample_ = true;
    // Without call chains the one frame follows on the header line.
    if (event_at + 1 < tokens.size()) {
      const char* rest = tokens[event_at + 1].data();
      CodeFrame frame;
      if (parse_frame(std::string_view(rest, line.data() + line.size() - rest), frame)) frames_.push_back(frame);
    }
  }

  void read_frame_line(std::string_view line) {
    if (!have_sample_) fail("a stack frame before any sample line");
    CodeFrame frame;
    std::string file;
    int number = 0;
    if (parse_frame(line, frame)) {
      frames_.push_back(std::move(frame));
    } else if (!frames_.empty() && parse_srcline(line, file, number)) {
      if (file != "??") frames_.back().file = file, frames_.back().line = number;
    } else {
      fail("not a stack frame (expected 'address symbol (object)')");
    }
  }

  const std::string& label_;
  CallStacks out_;
  std::string first_event_;
  bool have_sample_ = false, keep_ = false;
  std::vector<CodeFrame> frames_;
  double weight_ = 1;
  std::map<std::string, std::uint64_t> other_events_;
  std::size_t line_number_ = 0;
};

}  // namespace

CallStacks parse_perf_script(std::string_view text, const std::string& label) {
  return PerfScriptReader(label).read(text);
}

CallStacks read_perf_script(const std::filesystem::path& path) {
  return parse_perf_script(read_text(path), path.string());
}

}  // namespace maxcode
