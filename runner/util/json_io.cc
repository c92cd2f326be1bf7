#include "runner/util/json_io.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

namespace maxcode {

namespace {

using nlohmann::json;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence at text[at] (Unicode table 3-7: no
// overlong forms, no surrogates, nothing past U+10FFFF), or 0.
std::size_t sequence_length(std::string_view text, std::size_t at) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char b0 = byte(at);
  if (b0 < 0x80) return 1;
  std::size_t length;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) low = 0xA0;
    if (b0 == 0xED) high = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) low = 0x90;
    if (b0 == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  return length;
}

// "line 3, column 7" of the byte before `position` (nlohmann counts bytes read).
std::string line_and_column(std::string_view text, std::size_t position) {
  const std::size_t at = std::min<std::size_t>(position == 0 ? 0 : position - 1, text.size());
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + at, '\n'));
  const std::size_t newline = at == 0 ? std::string_view::npos : text.rfind('\n', at - 1);
  const std::size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(at - line_start + 1);
}

// The value types nlohmann's SAX interface asks a handler to name.
struct SaxTypes {
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;
};

// Builds the document like nlohmann's own DOM parser, and keeps the three rules of
// parse_json_input. Containers are held by pointer: an object's members never move,
// and an array only grows while none of its elements is open.
class StrictBuilder : public SaxTypes {
 public:
  StrictBuilder(json& root, std::size_t max_depth, bool unique_keys)
      : root_(root), max_depth_(max_depth), unique_keys_(unique_keys) {}

  bool null() { return add(nullptr); }
  bool boolean(bool value) { return add(value); }
  bool number_integer(number_integer_t value) { return add(value); }
  bool number_unsigned(number_unsigned_t value) { return add(value); }
  bool number_float(number_float_t value, const string_t&) { return add(value); }
  bool string(string_t& value) { return add(std::move(value)); }
  bool binary(binary_t& value) { return add(json(std::move(value))); }

  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& name) {
    Frame& frame = open_.back();
    if (unique_keys_ && frame.value->contains(name)) {
      problem_ = path(name) + ": duplicate key \"" + excerpt(name, 60) + "\" (each field once)";
      return false;
    }
    frame.key = name;
    frame.slot = &(*frame.value)[name];
    return true;
  }

  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& error) {
    position_ = position;
    if (error.id == 406) {  // out_of_range.406: a number beyond double, e.g. 1e400
      problem_ = path(std::nullopt) + ": number out of range: " + excerpt(token, 40);
      number_ = true;
      return false;
    }
    // what() reads "[json.exception.parse_error.101] parse error at ...: <what>": keep <what>.
    std::string what = error.what();
    const std::size_t prefix = what.find("parse error");
    const std::size_t colon = prefix == std::string::npos ? prefix : what.find(": ", prefix);
    if (colon != std::string::npos) what = what.substr(colon + 2);
    // "...; last read: '<token>'": a token may be a whole 50 MB string.
    const std::size_t read = what.find("last read: '");
    const std::size_t quote = what.rfind('\'');
    if (read != std::string::npos && quote > read + 12)
      what = what.substr(0, read + 12) + excerpt(std::string_view(what).substr(read + 12, quote - read - 12), 40) +
             what.substr(quote);
    problem_ = excerpt(what, 300);
    return false;
  }

  const std::optional<std::string>& problem() const { return problem_; }
  std::optional<std::size_t> position() const { return position_; }
  bool number_problem() const { return number_; }

 private:
  struct Frame {
    json* value;
    std::string key;       // the member being read, for an object
    json* slot = nullptr;  // where that member's value goes
  };

  json* place(json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& frame = open_.back();
    if (frame.value->is_array()) {
      frame.value->push_back(std::move(value));
      return &frame.value->back();
    }
    *frame.slot = std::move(value);
    return frame.slot;
  }

  bool add(json&& value) {
    place(std::move(value));
    return true;
  }

  bool open(json&& container) {
    if (open_.size() >= max_depth_) {
      problem_ = path(std::nullopt) + ": nested deeper than " + std::to_string(max_depth_) + " levels";
      return false;
    }
    open_.push_back({place(std::move(container)), {}, nullptr});
    return true;
  }

  bool close() {
    open_.pop_back();
    return true;
  }

  // The field being read, "search.knobs[2].values": the open containers' current
  // members, then `key` (a key about to be added to the innermost object). An array's
  // current element is the one being added (it is not there yet) when nothing is open
  // inside it. Long paths keep their first and last segments.
  std::string path(const std::optional<std::string>& key) const {
    std::vector<std::string> segments;
    for (std::size_t i = 0; i < open_.size(); ++i) {
      const Frame& frame = open_[i];
      const bool innermost = i + 1 == open_.size();
      if (frame.value->is_object()) {
        if (innermost && key) break;
        if (frame.slot) segments.push_back("." + excerpt(frame.key, 60));
      } else {
        const std::size_t size = frame.value->size();
        segments.push_back("[" + std::to_string(innermost ? size : size - 1) + "]");
      }
    }
    if (key) segments.push_back("." + excerpt(*key, 60));
    if (segments.size() > 12) {
      segments.erase(segments.begin() + 6, segments.end() - 4);
      segments.insert(segments.begin() + 6, "...");
    }
    std::string out;
    for (const std::string& s : segments)
      out += out.ends_with("...") && s.front() == '.' ? s.substr(1) : s;
    if (!out.empty() && out.front() == '.') out.erase(0, 1);
    return out.empty() ? "(the document)" : out;
  }

  json& root_;
  const std::size_t max_depth_;
  const bool unique_keys_;
  std::vector<Frame> open_;
  std::optional<std::string> problem_;
  std::optional<std::size_t> position_;
  bool number_ = false;
};

// Accepts like nlohmann's json::accept, and stops at the first level past max_depth.
class DepthLimitedAcceptor : public SaxTypes {
 public:
  DepthLimitedAcceptor(std::size_t max_depth, std::size_t max_values) : max_depth_(max_depth), max_values_(max_values) {}
  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(number_integer_t) { return value(); }
  bool number_unsigned(number_unsigned_t) { return value(); }
  bool number_float(number_float_t, const string_t&) { return value(); }
  bool string(string_t&) { return value(); }
  bool binary(binary_t&) { return value(); }
  bool start_object(std::size_t) { return value() && open(); }
  bool key(string_t&) { return true; }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return value() && open(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    position_ = position;
    problem_ = e.what();
    return false;
  }
  bool too_deep() const { return too_deep_; }
  bool too_many() const { return too_many_; }
  const std::optional<std::size_t>& position() const { return position_; }
  const std::string& problem() const { return problem_; }

 private:
  bool value() {
    if (++values_ > max_values_) too_many_ = true;
    return !too_many_;
  }
  bool open() {
    if (++depth_ > max_depth_) too_deep_ = true;
    return !too_deep_;
  }
  bool close() {
    --depth_;
    return true;
  }
  std::size_t max_depth_, max_values_, depth_ = 0, values_ = 0;
  bool too_deep_ = false, too_many_ = false;
  std::optional<std::size_t> position_;
  std::string problem_;
};

}  // namespace

JsonCheck check_json_input(std::string_view text, const std::string& label, std::size_t max_depth,
                           std::size_t max_values) {
  DepthLimitedAcceptor acceptor(std::max<std::size_t>(max_depth, 1), std::max<std::size_t>(max_values, 1));
  bool ok = false;
  try {
    ok = json::sax_parse(text, &acceptor, json::input_format_t::json, /*strict=*/true);
  } catch (const json::exception& e) {
    return {JsonCheck::Verdict::kMalformed, label + ": invalid JSON: " + excerpt(e.what(), 200)};
  }
  if (acceptor.too_deep())
    return {JsonCheck::Verdict::kTooDeep, label + ": nested deeper than " + std::to_string(max_depth) + " levels"};
  if (acceptor.too_many())
    return {JsonCheck::Verdict::kTooMany, label + ": more than " + std::to_string(max_values) + " values"};
  if (ok) return {};
  std::string problem = acceptor.problem().empty() ? "invalid JSON" : excerpt(acceptor.problem(), 200);
  if (acceptor.position()) problem = "invalid JSON at " + line_and_column(text, *acceptor.position()) + ": " + problem;
  return {JsonCheck::Verdict::kMalformed, label + ": " + problem};
}

bool is_valid_utf8(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = sequence_length(text, at);
    if (length == 0) return false;
    at += length;
  }
  return true;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = sequence_length(text, at);
    if (length == 0) {
      out += kReplacement;
      ++at;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

std::string excerpt(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return valid_utf8(text);
  std::size_t cut = limit;
  // Back to the start of a character: never more than 3 continuation bytes.
  for (int i = 0; i < 3 && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80; ++i) --cut;
  return valid_utf8(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

json parse_json_input(std::string_view text, const std::string& label, const JsonReadOptions& options) {
  json document;
  StrictBuilder builder(document, std::max<std::size_t>(options.max_depth, 1), options.unique_keys);
  bool ok = false;
  try {
    ok = json::sax_parse(text, &builder, json::input_format_t::json, /*strict=*/true, options.comments);
  } catch (const json::exception& e) {  // the parser reports through parse_error; this is a fallback
    throw JsonInputError(label + ": invalid JSON: " + excerpt(e.what(), 200));
  }
  if (ok && !builder.problem()) return document;
  const std::string problem = builder.problem().value_or("invalid JSON");
  if (builder.number_problem())
    throw JsonInputError(label + ": " + problem + " (" + line_and_column(text, *builder.position()) + ")");
  if (builder.position())
    throw JsonInputError(label + ": invalid JSON at " + line_and_column(text, *builder.position()) + ": " + problem);
  throw JsonInputError(label + ": " + problem);
}

}  // namespace maxcode
