#include "runner/search/reply.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "runner/workspace/normalize.h"
#include "runner/workspace/source_extent.h"
#include "runner/util/text.h"

namespace maxcode {

namespace {

struct Block {
  std::string text;
  bool closed = false;
};

// Fenced blocks (``` or ~~~, three or more, optional info string); text outside them
// goes to `prose`.
std::vector<Block> fenced_blocks(std::string_view reply, std::string& prose) {
  std::vector<Block> blocks;
  std::string fence;  // the opening fence while inside a block
  std::size_t pos = 0;
  while (pos <= reply.size()) {
    std::size_t end = reply.find('\n', pos);
    if (end == std::string_view::npos) end = reply.size();
    std::string_view line = reply.substr(pos, end - pos);
    std::string_view stripped = line.substr(std::min(line.find_first_not_of(" \t"), line.size()));
    const bool is_fence = stripped.rfind("```", 0) == 0 || stripped.rfind("~~~", 0) == 0;
    if (fence.empty() && is_fence) {
      const char mark = stripped[0];
      fence = std::string(stripped.substr(0, stripped.find_first_not_of(mark)));
      blocks.push_back({});
    } else if (!fence.empty() && is_fence && stripped.rfind(fence, 0) == 0 &&
               trim(stripped.substr(fence.size())).empty()) {
      blocks.back().closed = true;
      fence.clear();
    } else if (!fence.empty()) {
      blocks.back().text += std::string(line) + "\n";
    } else {
      prose += std::string(line) + "\n";
    }
    pos = end + 1;
  }
  return blocks;
}

bool looks_like_refusal(std::string_view text) {
  std::string lower;
  for (char c : text.substr(0, 400)) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* phrase : {"i can't", "i cannot", "i can not", "i won't", "i'm sorry", "i am sorry",
                             "unable to help", "not able to help", "i apologize"})
    if (lower.find(phrase) != std::string::npos) return true;
  return false;
}

// Braces still open at the end of `code` (comments and literals ignored).
int open_braces(std::string_view code) {
  const std::string normalized = normalize_code(code);
  int depth = 0;
  char quote = 0;
  for (std::size_t i = 0; i < normalized.size(); ++i) {
    const char c = normalized[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      --depth;
    }
  }
  return depth;
}

// The reply without the reasoning a model may write before its answer (<think>...</think>
// as DeepSeek-R1, QwQ and Qwen3 emit it inline; <thinking>, <reasoning>): its drafts are
// not the answer, and counting them made every such reply "2 code blocks define it
// differently". An unclosed section runs to the end (`unclosed` is then set).
std::string without_reasoning(std::string_view reply, bool& unclosed) {
  std::string out;
  std::size_t at = 0;
  unclosed = false;
  while (at < reply.size()) {
    std::size_t open = std::string_view::npos;
    std::string tag;
    for (const char* name : {"think", "thinking", "reasoning"}) {
      const std::string t = std::string("<") + name + ">";
      const std::size_t found = reply.find(t, at);
      if (found < open) {
        open = found;
        tag = name;
      }
    }
    if (open == std::string_view::npos) break;
    out += reply.substr(at, open - at);
    const std::string close = "</" + tag + ">";
    const std::size_t end = reply.find(close, open);
    if (end == std::string_view::npos) {
      unclosed = true;
      return out;
    }
    at = end + close.size();
  }
  out += reply.substr(std::min(at, reply.size()));
  return out;
}

// Why a reply without a block that defines the function gives no candidate.
std::string why_no_definition(std::string_view reply, const std::vector<Block>& blocks, bool unclosed, bool hit_limit,
                              const std::string& name) {
  if (blocks.empty()) {
    if (unclosed)
      return hit_limit ? "the reply was cut off (token limit) while the model was still reasoning"
                       : "the reply is all reasoning (a <think> section never closed) and gives no code";
    return looks_like_refusal(reply) ? "the model declined: " + std::string(trim(reply.substr(0, 200)))
           : hit_limit               ? "the reply was cut off (token limit) before any code"
                                     : "the reply has no fenced code block";
  }
  const Block& last = blocks.back();
  if (!last.closed || open_braces(last.text) > 0 || hit_limit)
    return "the definition of '" + name + "' is cut off mid-way" +
           (hit_limit ? " (the model hit its token limit)" : "");
  return "no code block defines '" + name + "'";
}

// Several blocks may define it: the original quoted back ("before"), a recap, or a
// first version and a better one. The original is not an answer; of the versions
// left, the last is the model's final word. Says in the rationale when there were
// several.
const Block& final_version(std::vector<const Block*> defining, std::string_view original, const std::string& name,
                           ParsedReply& parsed) {
  if (!original.empty() && defining.size() > 1) {
    const std::string unchanged = normalize_code(original);
    std::vector<const Block*> changed;
    for (const Block* b : defining)
      if (normalize_code(b->text) != unchanged) changed.push_back(b);
    if (!changed.empty()) defining = changed;
  }
  std::vector<std::string> versions;
  for (const Block* b : defining) {
    const std::string v = normalize_code(b->text);
    if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
  }
  if (versions.size() > 1)
    parsed.rationale = "(The reply gave " + std::to_string(versions.size()) + " versions of '" + name +
                       "'; the last was taken.)\n" + parsed.rationale;
  return *defining.back();
}

}  // namespace

ParsedReply parse_reply(std::string_view raw_reply, std::string_view function, std::string_view finish_reason,
                        std::string_view original) {
  ParsedReply parsed;
  if (raw_reply.size() > kMaxCandidateBytes) {
    parsed.error = "the reply is " + std::to_string(raw_reply.size()) + " bytes; a candidate is at most " +
                   std::to_string(kMaxCandidateBytes >> 20) + " MiB";
    return parsed;
  }
  bool unclosed = false;
  const std::string answer = without_reasoning(raw_reply, unclosed);
  const std::string_view reply = answer;
  std::string prose;
  std::vector<Block> blocks = fenced_blocks(reply, prose);
  parsed.rationale = trim(prose);
  const bool hit_limit = finish_reason == "length";
  const std::string name(function);

  std::vector<const Block*> defining;
  for (const Block& b : blocks)
    if (!find_definitions(b.text, function).empty()) defining.push_back(&b);
  if (defining.empty()) {
    parsed.error = why_no_definition(reply, blocks, unclosed, hit_limit, name);
    return parsed;
  }
  const Block& chosen = final_version(defining, original, name, parsed);
  if (!chosen.closed || open_braces(chosen.text) != 0) {
    parsed.error = "the definition of '" + name + "' is cut off mid-way";
    return parsed;
  }
  parsed.code = trim(chosen.text);
  return parsed;
}

}  // namespace maxcode
