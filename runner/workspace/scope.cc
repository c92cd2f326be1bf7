#include "runner/workspace/scope.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "runner/workspace/knobs.h"
#include "runner/util/text.h"

namespace maxcode {
namespace {

// ---------------------------------------------------------------------------------------
// Lines.

struct Line {
  std::string_view text;  // without its newline
  std::size_t offset;     // of its first character in the file
};

// One entry per newline plus the text after the last one (possibly empty), so that
// joining the texts with newlines gives back `text`.
std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) break;
    lines.push_back({text.substr(start, nl - start), start});
    start = nl + 1;
  }
  lines.push_back({text.substr(start), start});
  return lines;
}

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

std::size_t line_number(std::string_view text, std::size_t offset) {
  return 1 + static_cast<std::size_t>(std::count(
                 text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// For messages: the line without its indentation, shortened if long.
std::string shown(std::string_view line) {
  std::string s(trim(line));
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

// Whether the line goes on into the next one (a backslash before the newline).
bool is_spliced(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return !line.empty() && line.back() == '\\';
}

// ---------------------------------------------------------------------------------------
// Knob lines: the one kind of line outside the target whose text may change.

// parse_knob_line (knobs.h) takes a knob line apart; the scope rule and the tune policy
// must agree on what a knob line is.
std::optional<KnobDeclaration> parse_knob(std::string_view line) { return parse_knob_line(line); }

const KnobLine* find_knob(const std::vector<KnobLine>& knobs, std::string_view name) {
  for (const KnobLine& k : knobs) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

bool is_knob_value(const KnobLine& knob, std::string_view value) {
  return std::find(knob.values.begin(), knob.values.end(), value) != knob.values.end();
}

// Whether `candidate` may stand where `original` stood: the same text, or the same knob
// declaration with another of the knob's values.
class LineMatcher {
 public:
  explicit LineMatcher(const std::vector<KnobLine>& knobs) : knobs_(knobs) {}

  bool operator()(std::string_view original, std::string_view candidate) const {
    if (original == candidate) return true;
    if (knobs_.empty()) return false;
    const auto a = parse_knob(original);
    const auto b = parse_knob(candidate);
    if (!a || !b || a->name != b->name || a->before != b->before || a->after != b->after)
      return false;
    const KnobLine* knob = find_knob(knobs_, a->name);
    return knob != nullptr && is_knob_value(*knob, b->value);
  }

  // Why a changed knob line is refused, when a knob's value is the story; else empty.
  std::string knob_complaint(std::string_view original, std::string_view candidate) const {
    const auto a = parse_knob(original);
    const auto b = parse_knob(candidate);
    if (!a || !b || a->name != b->name || a->before != b->before || a->after != b->after) return "";
    const KnobLine* knob = find_knob(knobs_, a->name);
    if (knob == nullptr || is_knob_value(*knob, b->value)) return "";
    std::string values;
    for (const std::string& v : knob->values) values += (values.empty() ? "" : ", ") + v;
    return "knob " + a->name + " set to `" + std::string(b->value) +
           "`, which is not one of its values (" + values + ")";
  }

 private:
  const std::vector<KnobLine>& knobs_;
};

// ---------------------------------------------------------------------------------------
// Problems: the first offending line, described for the candidate's author.

struct Problem {
  enum Kind { kChanged, kAdded, kRemoved } kind;
  std::size_t line;           // candidate's line (changed, added) or original's (removed)
  std::string_view text;      // the candidate's line (changed, added)
  std::string_view old_text;  // the original's line (changed, removed)
};

// `outside` names what the candidate may change: "the target function", or "the unit of
// 'fn'" when the unit has more functions than the target.
std::string describe(const Problem& p, std::string_view file, const LineMatcher& match,
                     const std::string& outside) {
  std::string where = std::string(file) + ":" + std::to_string(p.line) + ": ";
  switch (p.kind) {
    case Problem::kAdded:
      return where + "line added outside " + outside + ": `" + shown(p.text) + "`";
    case Problem::kRemoved:
      return where + "line outside " + outside + " removed: `" + shown(p.old_text) + "`";
    case Problem::kChanged:
      break;
  }
  const std::string knob = match.knob_complaint(p.old_text, p.text);
  if (!knob.empty()) return where + knob;
  return where + "line outside " + outside + " changed: `" + shown(p.text) + "` (was `" +
         shown(p.old_text) + "`)";
}

// The mismatch of original line `o` and candidate line `c` (0-based, the same numbers in
// the unchanged head of the file), told apart by one line of look-ahead.
Problem classify(const std::vector<Line>& orig, const std::vector<Line>& cand, std::size_t o,
                 std::size_t c, const LineMatcher& match) {
  const bool has_o = o < orig.size(), has_c = c < cand.size();
  if (!has_c || (has_o && o + 1 < orig.size() && match(orig[o + 1].text, cand[c].text)))
    return {Problem::kRemoved, o + 1, {}, has_o ? orig[o].text : std::string_view()};
  if (!has_o || (c + 1 < cand.size() && match(orig[o].text, cand[c + 1].text)))
    return {Problem::kAdded, c + 1, cand[c].text, {}};
  return {Problem::kChanged, c + 1, cand[c].text, orig[o].text};
}

// ---------------------------------------------------------------------------------------
// The replaceable region and the unchanged head and tail around it.

struct Region {
  std::size_t begin;
  std::size_t end;
};

// A line that can go without changing the code: blank, or a `//` comment (not spliced
// onto the next line by a trailing backslash).
bool is_idle_line(std::string_view line) {
  const std::string_view s = trim(line);
  return s.empty() || (s.rfind("//", 0) == 0 && !is_spliced(s));
}

// The text of the line that ends with the newline at `newline`.
std::string_view line_ending_at(std::string_view text, std::size_t newline) {
  const std::size_t previous =
      newline == 0 ? std::string_view::npos : text.rfind('\n', newline - 1);
  const std::size_t start = previous == std::string_view::npos ? 0 : previous + 1;
  return text.substr(start, newline - start);
}

// The definition widened over the blank lines around it and the comments right above it,
// so that spacing and the doc comment may change and helpers may go above the comment.
// It starts and ends at line boundaries unless the definition shares a line with code.
Region replaceable_region(std::string_view text, const Extent& extent) {
  std::size_t b = std::min(extent.begin, text.size());
  while (b > 0 && is_blank(text[b - 1])) --b;
  std::size_t begin = b;
  if (b > 0) {
    const std::size_t nl = text.find('\n', b);
    if (nl < extent.begin) begin = nl + 1;
  }
  // Each line above ends with the newline at begin - 1.
  while (begin > 0 && text[begin - 1] == '\n') {
    const std::string_view above = line_ending_at(text, begin - 1);
    if (!is_idle_line(above)) break;
    begin = static_cast<std::size_t>(above.data() - text.data());
  }
  // A line spliced onto one above belongs to it (a #define's body, a comment): text
  // put there would change that line, so the region starts below it.
  while (begin > 0 && begin < extent.begin && text[begin - 1] == '\n' &&
         is_spliced(line_ending_at(text, begin - 1)))
    begin = text.find('\n', begin) + 1;
  std::size_t e = std::min(extent.end, text.size());
  while (e < text.size() && is_blank(text[e])) ++e;
  std::size_t end = e;
  if (e < text.size()) {
    const std::size_t nl = text.rfind('\n', e);
    if (nl != std::string_view::npos && nl >= extent.end) end = nl + 1;
  }
  return {begin, end};
}

// Matches the candidate's head against original[0, end). Returns the candidate offset
// where the head ends, or the first offending line.
struct HeadMatch {
  std::size_t end = 0;
  std::optional<Problem> problem;
};

HeadMatch match_head(std::string_view original, std::size_t end, const std::vector<Line>& orig,
                     const std::vector<Line>& cand, const LineMatcher& match) {
  const std::vector<Line> head = split_lines(original.substr(0, end));
  const std::size_t full = head.size() - 1;  // the last entry is a partial line
  for (std::size_t i = 0; i < full; ++i) {
    if (i >= cand.size() || !match(head[i].text, cand[i].text))
      return {0, classify(orig, cand, i, i, match)};
  }
  const std::string_view partial = head.back().text;
  if (full >= cand.size() || cand[full].text.substr(0, partial.size()) != partial)
    return {0, classify(orig, cand, full, full, match)};
  return {cand[full].offset + partial.size(), std::nullopt};
}

// Matches the candidate's tail against original[begin, size) from the bottom up. Returns
// the candidate offset where the tail begins, or the lowest mismatch (tail line index,
// candidate line index).
struct TailMatch {
  std::size_t begin = 0;
  bool ok = false;
  std::size_t tail_line = 0;
  std::size_t cand_line = 0;
};

TailMatch match_tail(std::string_view original, std::size_t begin, const std::vector<Line>& cand,
                     const LineMatcher& match) {
  const std::vector<Line> tail = split_lines(original.substr(begin));
  // A tail that starts a line must start one in the candidate too: text glued to the
  // front of the next line (`static ` before another function) is no helper.
  const bool starts_line = begin < original.size() && (begin == 0 || original[begin - 1] == '\n');
  const std::size_t whole = starts_line ? tail.size() : tail.size() - 1;
  for (std::size_t t = 0; t < whole; ++t) {
    const std::size_t q = tail.size() - 1 - t;
    if (t >= cand.size()) return {0, false, q, 0};
    const std::size_t c = cand.size() - 1 - t;
    if (!match(tail[q].text, cand[c].text)) return {0, false, q, c};
  }
  if (starts_line) return {cand[cand.size() - tail.size()].offset, true, 0, 0};
  if (whole >= cand.size()) return {0, false, 0, 0};
  const Line& line = cand[cand.size() - 1 - whole];
  const std::string_view partial = tail[0].text;
  if (line.text.size() < partial.size() ||
      line.text.substr(line.text.size() - partial.size()) != partial)
    return {0, false, 0, cand.size() - 1 - whole};
  return {line.offset + line.text.size() - partial.size(), true, 0, 0};
}

// ---------------------------------------------------------------------------------------
// The first offending line below the target. Scanning up from the bottom finds the
// lowest one; the first is found by aligning the candidate's lines after its new
// definition with the original's after the target (longest common subsequence). Lines
// inserted before the first kept line are helpers, and allowed.

struct Numbered {
  std::string_view text;
  std::size_t line;  // 1-based, in its own file
};

class TailDiff {
 public:
  TailDiff(std::vector<Numbered> orig, std::vector<Numbered> cand, const LineMatcher& match)
      : o_(std::move(orig)),
        c_(std::move(cand)),
        match_(match),
        lcs_((o_.size() + 1) * (c_.size() + 1), 0) {
    for (std::size_t i = o_.size(); i-- > 0;) {
      for (std::size_t j = c_.size(); j-- > 0;) {
        at(i, j) = match_(o_[i].text, c_[j].text) ? at(i + 1, j + 1) + 1
                                                  : std::max(at(i + 1, j), at(i, j + 1));
      }
    }
  }

  static bool affordable(std::size_t n, std::size_t m) { return (n + 1) * (m + 1) <= 4'000'000; }

  std::optional<Problem> first_problem() const {
    std::size_t i = 0, j = 0;
    bool kept = false;
    Op previous = Op::kKeep;
    while (i < o_.size() || j < c_.size()) {
      const Op op = next(i, j);
      if (op == Op::kKeep) {
        kept = true;
        ++i, ++j;
      } else if (op == Op::kInsert) {
        if (kept) {
          if (i < o_.size() && next(i, j + 1) == Op::kDelete)
            return Problem{Problem::kChanged, c_[j].line, c_[j].text, o_[i].text};
          return Problem{Problem::kAdded, c_[j].line, c_[j].text, {}};
        }
        ++j;
      } else {
        // A non-blank line inserted just before most likely replaced this one.
        if (previous == Op::kInsert && !shown(c_[j - 1].text).empty())
          return Problem{Problem::kChanged, c_[j - 1].line, c_[j - 1].text, o_[i].text};
        return Problem{Problem::kRemoved, o_[i].line, {}, o_[i].text};
      }
      previous = op;
    }
    return std::nullopt;
  }

 private:
  enum class Op { kKeep, kInsert, kDelete };

  std::uint32_t& at(std::size_t i, std::size_t j) { return lcs_[i * (c_.size() + 1) + j]; }
  std::uint32_t at(std::size_t i, std::size_t j) const { return lcs_[i * (c_.size() + 1) + j]; }

  // On ties an insertion comes first, so helpers are read as inserted before kept lines.
  Op next(std::size_t i, std::size_t j) const {
    if (i < o_.size() && j < c_.size() && match_(o_[i].text, c_[j].text) &&
        at(i, j) == at(i + 1, j + 1) + 1)
      return Op::kKeep;
    if (j < c_.size() && (i == o_.size() || at(i, j + 1) >= at(i + 1, j))) return Op::kInsert;
    return Op::kDelete;
  }

  std::vector<Numbered> o_;
  std::vector<Numbered> c_;
  const LineMatcher& match_;
  std::vector<std::uint32_t> lcs_;
};

// Lines of `text` from offset `from` (the first one partial) through line index `last`.
std::vector<Numbered> numbered_lines(std::string_view text, const std::vector<Line>& lines,
                                     std::size_t from, std::size_t last) {
  std::vector<Numbered> out;
  const std::size_t first = line_number(text, from) - 1;
  for (std::size_t i = first; i <= last && i < lines.size(); ++i) {
    std::string_view t = lines[i].text;
    if (i == first) t = t.substr(std::min(t.size(), from - lines[i].offset));
    out.push_back({t, i + 1});
  }
  return out;
}

Problem tail_problem(std::string_view original, std::string_view candidate, Region region,
                     std::size_t head_end, const TailMatch& tail, const std::vector<Line>& orig,
                     const std::vector<Line>& cand, std::string_view function,
                     const LineMatcher& match) {
  // Compare from the end of the candidate's new definition, where one can be found.
  std::size_t from = head_end;
  for (const Extent& e : find_definitions(candidate, function)) {
    if (e.begin >= head_end &&
        e.end <= cand[tail.cand_line].offset + cand[tail.cand_line].text.size()) {
      from = e.end;
      break;
    }
  }
  const std::size_t first_tail_line = line_number(original, region.end) - 1;
  std::vector<Numbered> o =
      numbered_lines(original, orig, region.end, first_tail_line + tail.tail_line);
  std::vector<Numbered> c;
  if (line_number(candidate, from) - 1 <= tail.cand_line)
    c = numbered_lines(candidate, cand, from, tail.cand_line);
  if (TailDiff::affordable(o.size(), c.size())) {
    if (auto p = TailDiff(std::move(o), std::move(c), match).first_problem()) return *p;
  }
  return classify(orig, cand, first_tail_line + tail.tail_line, tail.cand_line, match);
}

// ---------------------------------------------------------------------------------------
// Inserted text reaches past itself only through the preprocessor: a macro it defines
// or undefines that code outside the region uses (a knob, another function's name), or
// a last line spliced onto the first line after it.

// The name that `#define NAME` or `#undef NAME` on this line (re)defines, or empty.
// Scanned by hand: std::regex recurses once per character of the line, and a
// 60,000-character #define from a candidate overflowed the stack.
std::string_view macro_name(std::string_view line) {
  std::size_t at = 0;
  auto space = [&] {
    const std::size_t from = at;
    while (at < line.size() && std::isspace(static_cast<unsigned char>(line[at]))) ++at;
    return at > from;
  };
  space();
  if (at == line.size() || line[at] != '#') return {};
  ++at;
  space();
  if (line.compare(at, 6, "define") == 0) at += 6;
  else if (line.compare(at, 5, "undef") == 0) at += 5;
  else return {};
  if (!space() || at == line.size()) return {};
  if (!std::isalpha(static_cast<unsigned char>(line[at])) && line[at] != '_') return {};
  const std::size_t start = at;
  while (at < line.size() && (std::isalnum(static_cast<unsigned char>(line[at])) || line[at] == '_')) ++at;
  return line.substr(start, at - start);
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool uses_word(std::string_view text, std::string_view word) {
  for (std::size_t at = text.find(word); at != std::string_view::npos;
       at = text.find(word, at + 1)) {
    const std::size_t after = at + word.size();
    if ((at == 0 || !is_word_char(text[at - 1])) &&
        (after == text.size() || !is_word_char(text[after])))
      return true;
  }
  return false;
}

// Why the inserted text, candidate[begin, end), may not stand (with the candidate's
// 1-based line of the culprit), or nullopt. Macro lines the original regions already had
// are fine, and so are macros that nothing outside the regions uses.
std::optional<std::pair<std::size_t, std::string>> inserted_text_problem(
    std::string_view original, const std::vector<Region>& regions, std::string_view candidate,
    std::size_t begin, std::size_t end, const std::string& outside_what) {
  const std::size_t first_line = line_number(candidate, begin);
  const std::vector<Line> lines = split_lines(candidate.substr(begin, end - begin));
  const std::size_t last =
      lines.back().text.empty() && lines.size() > 1 ? lines.size() - 2 : lines.size() - 1;
  if (end > begin && is_spliced(lines[last].text))
    return std::pair{first_line + last,
                     std::string("the new text ends with a backslash that splices it onto the "
                                 "line after it")};
  std::vector<std::string_view> had;
  std::string outside;
  std::size_t at = 0;
  for (const Region& region : regions) {
    for (const Line& l : split_lines(original.substr(region.begin, region.end - region.begin)))
      had.push_back(trim(l.text));
    outside += std::string(original.substr(at, region.begin - at)) + "\n";
    at = region.end;
  }
  outside += std::string(original.substr(at));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view name = macro_name(lines[i].text);
    if (name.empty() || std::find(had.begin(), had.end(), trim(lines[i].text)) != had.end())
      continue;
    if (uses_word(outside, name))
      return std::pair{first_line + i, "`" + shown(lines[i].text) + "` would change code outside " +
                                           outside_what + ", which uses " + std::string(name)};
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Between two functions of a unit: the lines there must stand unchanged, in order.

struct GapMatch {
  std::size_t begin = 0;  // where the gap starts and ends in the candidate
  std::size_t end = 0;
  std::optional<Problem> problem;
};

// Finds original[gap_begin, gap_end) in candidate[from, to), line by line (knob lines may
// differ in their values), at the first place it stands whole after the candidate's
// definitions of `before` (the functions of the region above it). Not before: a gap of
// one `#endif` line also stands inside a body above it that ends its own `#if` (libpopcnt's
// get_xcr0), and a match there would cut that function in two. When it stands nowhere,
// the gap is compared line by line from that same place, and the first difference is the
// problem.
GapMatch match_gap(std::string_view original, std::size_t gap_begin, std::size_t gap_end,
                   std::string_view candidate, const std::vector<Line>& cand, std::size_t from,
                   std::size_t to, const std::vector<std::string>& before, const LineMatcher& match) {
  const std::string_view gap = original.substr(gap_begin, gap_end - gap_begin);
  const bool aligned = (gap_begin == 0 || original[gap_begin - 1] == '\n') &&
                       (gap_end == 0 || original[gap_end - 1] == '\n');
  if (!aligned) {  // a definition sharing its line with other code: the text as it is
    const std::size_t at = candidate.find(gap, from);
    if (at != std::string_view::npos && at + gap.size() <= to) return {at, at + gap.size(), std::nullopt};
    const std::size_t line = line_number(original, gap_begin);
    return {0, 0, Problem{Problem::kRemoved, line, {}, split_lines(original)[line - 1].text}};
  }
  std::vector<Line> lines = split_lines(gap);
  lines.pop_back();  // the empty text after the last newline
  // Where the gap may start: after the region's own definitions, the first ones of its
  // names from `from` on, as many as it holds. A name defined again further down (one
  // definition per `#if` branch: libpopcnt's popcnt64) belongs to a later region.
  std::vector<Extent> defined;
  for (const std::string& name : std::set<std::string>(before.begin(), before.end()))
    for (const Extent& e : find_definitions(candidate, name))
      if (e.begin >= from && e.end <= to) defined.push_back(e);
  std::sort(defined.begin(), defined.end(), [](const Extent& a, const Extent& b) { return a.begin < b.begin; });
  if (defined.size() > before.size()) defined.resize(before.size());
  std::size_t anchor = from;
  for (const Extent& e : defined) anchor = std::max(anchor, e.end);
  for (std::size_t c = 0; c < cand.size() && cand[c].offset <= to; ++c) {
    if (cand[c].offset < anchor) continue;
    std::size_t k = 0;
    while (k < lines.size() && c + k < cand.size() && cand[c + k].offset < to &&
           match(lines[k].text, cand[c + k].text))
      ++k;
    if (k == lines.size()) {
      const std::size_t end = c + k < cand.size() ? cand[c + k].offset : candidate.size();
      return {cand[c].offset, end, std::nullopt};
    }
  }
  // Compared from after the anchor, past idle lines.
  std::size_t c = line_number(candidate, anchor);  // 0-based index of the line after the anchor's
  while (c < cand.size() && is_idle_line(cand[c].text)) ++c;
  const std::size_t first = line_number(original, gap_begin);  // 1-based
  for (std::size_t k = 0; k < lines.size(); ++k, ++c) {
    if (c < cand.size() && match(lines[k].text, cand[c].text)) continue;
    const bool removed = c >= cand.size() || (k + 1 < lines.size() && match(lines[k + 1].text, cand[c].text));
    if (removed) return {0, 0, Problem{Problem::kRemoved, first + k, {}, lines[k].text}};
    return {0, 0, Problem{Problem::kChanged, c + 1, cand[c].text, lines[k].text}};
  }
  return {0, 0, Problem{Problem::kRemoved, first, {}, lines.front().text}};
}

// The unit's replaceable regions in file order, those that touch or overlap merged; each
// with the names of the unit functions it holds.
struct UnitRegion {
  Region region;
  std::vector<std::string> names;
};

std::vector<UnitRegion> unit_regions(std::string_view original, const Unit& unit) {
  std::vector<UnitRegion> regions;
  for (const UnitFunction& f : unit.functions)
    regions.push_back({replaceable_region(original, f.extent), {f.name}});
  std::sort(regions.begin(), regions.end(),
            [](const UnitRegion& a, const UnitRegion& b) { return a.region.begin < b.region.begin; });
  std::vector<UnitRegion> merged;
  for (UnitRegion& r : regions) {
    if (!merged.empty() && r.region.begin <= merged.back().region.end) {
      merged.back().region.end = std::max(merged.back().region.end, r.region.end);
      merged.back().names.insert(merged.back().names.end(), r.names.begin(), r.names.end());
    } else {
      merged.push_back(std::move(r));
    }
  }
  return merged;
}

std::string joined_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A definition in the new text that redefines a function outside the unit (of this file,
// or one the unit calls in another file): why it may not stand, or empty.
std::string outside_definition(std::string_view original, std::string_view candidate,
                               const Unit& unit, const std::vector<std::pair<std::size_t, std::size_t>>& pieces,
                               std::string_view file_label) {
  std::map<std::string, std::vector<const Definition*>> outside;  // base name -> definitions
  const std::vector<Definition> defs = list_definitions(original);
  std::set<std::size_t> in_unit;
  for (const UnitFunction& f : unit.functions) in_unit.insert(f.extent.begin);
  std::set<std::string> unit_names;
  for (const UnitFunction& f : unit.functions) unit_names.insert(f.base_name);
  for (const Definition& d : defs)
    if (!d.in_class && !in_unit.count(d.extent.begin)) outside[d.base_name].push_back(&d);
  const std::string target = unit.functions.empty() ? "" : unit.functions.front().name;
  for (const Definition& d : list_definitions(candidate)) {
    if (d.in_class) continue;
    const bool inserted = std::any_of(pieces.begin(), pieces.end(), [&](const auto& p) {
      return d.extent.begin >= p.first && d.extent.end <= p.second;
    });
    if (!inserted) continue;
    const std::string where = std::string(file_label) + ":" + std::to_string(d.extent.line_begin) + ": ";
    auto found = outside.find(d.base_name);
    if (found != outside.end()) {
      const Definition* same = found->second.front();
      if (unit_names.count(d.base_name)) {  // an overload shares the name: the signature decides
        same = nullptr;
        for (const Definition* o : found->second)
          if (canonical_text(o->extent.signature) == canonical_text(d.extent.signature)) same = o;
        if (same == nullptr) continue;
      }
      return where + "the candidate defines '" + d.extent.name + "', which is outside the unit of '" + target +
             "' (" + joined_names(unit.names()) + "); it stands at " + std::string(file_label) + ":" +
             std::to_string(same->extent.line_begin) +
             ". Only the unit's functions may be redefined: to let candidates change '" + same->base_name +
             "', add it to targets.unit.add in .maxcode.json; or give the new function a name of its own";
    }
    for (const OutsideCallee& o : unit.elsewhere) {
      if (o.name != d.base_name) continue;
      return where + "the candidate defines '" + d.extent.name + "', which is defined in " + o.where +
             ", outside the unit of '" + target + "' (a unit stays within " + unit.file +
             "); give the new function a name of its own";
    }
  }
  return "";
}

}  // namespace

ScopeVerdict check_unit_file(std::string_view original, std::string_view candidate,
                             const Unit& unit, std::string_view file_label,
                             const std::vector<KnobLine>& knobs) {
  const LineMatcher match(knobs);
  const std::vector<UnitRegion> regions = unit_regions(original, unit);
  const std::string what = unit.functions.size() == 1
                               ? std::string("the target function")
                               : "the unit of '" + unit.functions.front().name + "'";
  const std::vector<Line> orig = split_lines(original);
  const std::vector<Line> cand = split_lines(candidate);
  auto reject = [&](const Problem& p) {
    return ScopeVerdict{false, describe(p, file_label, match, what)};
  };

  const HeadMatch head = match_head(original, regions.front().region.begin, orig, cand, match);
  if (head.problem) return reject(*head.problem);
  const TailMatch tail = match_tail(original, regions.back().region.end, cand, match);
  if (!tail.ok)
    return reject(tail_problem(original, candidate, regions.back().region, head.end, tail, orig, cand,
                               regions.back().names.back(), match));
  if (tail.begin < head.end) {
    // Head and tail overlap: the candidate lost text next to the unit.
    const std::size_t line = line_number(original, regions.back().region.end);
    return reject({Problem::kRemoved, line, {}, orig[line - 1].text});
  }
  // The new text at each region: between the gaps, which stand unchanged.
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  std::size_t at = head.end;
  for (std::size_t i = 0; i + 1 < regions.size(); ++i) {
    const GapMatch gap = match_gap(original, regions[i].region.end, regions[i + 1].region.begin, candidate,
                                   cand, at, tail.begin, regions[i].names, match);
    if (gap.problem) return reject(*gap.problem);
    pieces.push_back({at, gap.begin});
    at = gap.end;
  }
  pieces.push_back({at, tail.begin});
  std::vector<Region> plain;
  for (const UnitRegion& r : regions) plain.push_back(r.region);
  for (const auto& [begin, end] : pieces) {
    if (auto problem = inserted_text_problem(original, plain, candidate, begin, end, what))
      return {false, std::string(file_label) + ":" + std::to_string(problem->first) + ": " + problem->second};
  }
  const std::string outside = outside_definition(original, candidate, unit, pieces, file_label);
  if (!outside.empty()) return {false, outside};
  // Every function of the unit is still defined, in the new text.
  for (const UnitFunction& f : unit.functions) {
    const auto wanted = std::count_if(unit.functions.begin(), unit.functions.end(),
                                      [&](const UnitFunction& g) { return g.name == f.name; });
    std::ptrdiff_t defined = 0;
    for (const Extent& e : find_definitions(candidate, f.name)) {
      defined += std::any_of(pieces.begin(), pieces.end(),
                             [&](const auto& p) { return e.begin >= p.first && e.end <= p.second; });
    }
    if (defined < wanted)
      return {false, std::string(file_label) + ":" + std::to_string(f.extent.line_begin) +
                         ": candidate no longer defines '" + f.name + "'"};
  }
  return {};
}

ScopeVerdict check_target_file(std::string_view original, std::string_view candidate,
                               const Extent& original_extent, std::string_view function,
                               std::string_view file_label, const std::vector<KnobLine>& knobs) {
  Unit unit;
  unit.file = std::string(file_label);
  unit.functions.push_back({std::string(function), std::string(function), original_extent, "the target"});
  return check_unit_file(original, candidate, unit, file_label, knobs);
}

std::string replace_definition(std::string_view text, const Extent& extent,
                               std::string_view definition) {
  std::string out(text.substr(0, extent.begin));
  out += definition;
  out += text.substr(extent.end);
  return out;
}

}  // namespace maxcode
