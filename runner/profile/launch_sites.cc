#include "runner/profile/launch_sites.h"

#include <algorithm>

#include "runner/workspace/cpp_tokens.h"
#include "runner/workspace/source_extent.h"

namespace maxcode {

namespace {

using cpp::kNone;
using Tokens = cpp::TokenView;  // the shared scanner: brackets paired, literals one token

// A qualified name ending at the word `last`: back over `a::b::` qualifiers.
std::string name_ending_at(const Tokens& t, std::size_t last) {
  std::size_t first = last;
  while (first >= 2 && t.is(first - 1, "::") && t.is_word(first - 2)) first -= 2;
  std::string out;
  for (std::size_t k = first; k <= last; ++k) out += t.str(k);
  return out;
}

bool is_cast(std::string_view w) {
  return w == "reinterpret_cast" || w == "static_cast" || w == "const_cast";
}

// The kernel named by an argument [from, to): `kernel`, `ns::kernel<float>`,
// `(void*)kernel`, `reinterpret_cast<const void*>(&kernel)`. Empty for anything else.
std::string kernel_in_argument(const Tokens& t, std::size_t from, std::size_t to) {
  while (from < to) {
    if (t.is(from, "&") || t.is(from, "*")) {
      ++from;
    } else if (t.is(from, "(") && t.match(from) != kNone && t.match(from) < to) {
      if (t.match(from) + 1 == to) {  // parenthesized: look inside
        ++from, --to;
      } else {
        from = t.match(from) + 1;  // a C-style cast
      }
    } else if (t.is_word(from) && is_cast(t.str(from)) && t.is(from + 1, "<")) {
      const std::size_t close = t.angle_close(from + 1, to);
      if (close == kNone || !t.is(close + 1, "(") || t.match(close + 1) == kNone) return "";
      to = t.match(close + 1);
      from = close + 2;
    } else {
      break;
    }
  }
  // A (qualified) name, then optional template arguments, then nothing.
  std::size_t k = from;
  if (!t.is_word(k)) return "";
  while (t.is(k + 1, "::") && t.is_word(k + 2)) k += 2;
  const std::size_t last = k;
  if (t.is(k + 1, "<")) {
    k = t.angle_close(k + 1, to);
    if (k == kNone) return "";
  }
  return k + 1 == to ? name_ending_at(t, last) : "";
}

// The end of the argument starting at `from` inside a call whose `(` closes at `close`.
std::size_t argument_end(const Tokens& t, std::size_t from, std::size_t close) {
  int angles = 0;
  for (std::size_t k = from; k < close; ++k) {
    if (t.is(k, "(") && t.match(k) != kNone) k = t.match(k);
    else if (t.is(k, "<")) ++angles;
    else if (t.is(k, ">") && angles > 0) --angles;
    else if (t.is(k, ",") && angles == 0) return k;
  }
  return close;
}

int line_at(std::string_view text, std::size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

}  // namespace

std::vector<LaunchSite> find_launch_sites(std::string_view text) {
  if (text.find("<<<") == std::string_view::npos && text.find("cudaLaunch") == std::string_view::npos) return {};
  const Tokens t(text);
  std::vector<std::pair<std::size_t, std::string>> launches;  // token of the launch, kernel name
  for (std::size_t k = 1; k < t.size(); ++k) {
    if (t.is_launch(k)) {
      std::size_t last = k - 1;
      if (t.is(last, ">")) {  // kernel<float><<<...>>>
        const std::size_t open = t.angle_open(last);
        if (open == kNone || open == 0) continue;
        last = open - 1;
      }
      if (t.is_word(last)) launches.push_back({k, name_ending_at(t, last)});
      k += 2;
    } else if (t.is_word(k) && t.is(k + 1, "(") && t.match(k + 1) != kNone) {
      const std::string_view w = t.str(k);
      int argument = w == "cudaLaunchKernel" || w == "cudaLaunchCooperativeKernel" ? 0
                     : w == "cudaLaunchKernelEx"                                    ? 1
                                                                                    : -1;
      if (argument < 0) continue;
      const std::size_t close = t.match(k + 1);
      std::size_t from = k + 2;
      for (; argument > 0 && from < close; --argument) from = argument_end(t, from, close) + 1;
      const std::string kernel = kernel_in_argument(t, from, argument_end(t, from, close));
      if (!kernel.empty()) launches.push_back({k, kernel});
    }
  }
  if (launches.empty()) return {};
  const std::vector<Definition> definitions = list_definitions(text);
  std::vector<LaunchSite> out;
  for (const auto& [token, kernel] : launches) {
    const std::size_t at = t.offset(token);
    LaunchSite site;
    site.kernel = kernel;
    site.line = line_at(text, at);
    for (const Definition& definition : definitions) {
      const Extent& d = definition.extent;
      if (d.body_begin <= at && at < d.end) {
        site.launcher = d.qualified;
        site.signature = d.signature;
        break;
      }
    }
    out.push_back(std::move(site));
  }
  return out;
}

std::vector<int> value_uses(std::string_view text, std::string_view name) {
  if (name.empty() || text.find(name) == std::string_view::npos) return {};
  const Tokens t(text);
  std::vector<int> lines;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (!t.is_word(k) || t.str(k) != name) continue;
    // Called, launched, declared or given template arguments: not a value.
    if (t.is(k + 1, "(") || t.is(k + 1, "<") || t.is(k + 1, "::")) continue;
    const bool before = k > 0 && (t.is(k - 1, "&") || t.is(k - 1, "=") || t.is(k - 1, ",") ||
                                  t.is(k - 1, "(") || t.is(k - 1, "{") || t.is(k - 1, "return") ||
                                  t.is(k - 1, ")"));
    const bool after = t.is(k + 1, ",") || t.is(k + 1, ")") || t.is(k + 1, ";") || t.is(k + 1, "}");
    if (before && after) {
      const int line = line_at(text, t.offset(k));
      if (lines.empty() || lines.back() != line) lines.push_back(line);
    }
  }
  return lines;
}

}  // namespace maxcode
