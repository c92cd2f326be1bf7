// Reading an LLM's reply: the fenced code block with the new definition of the target
// (helpers may precede it in the same block), and the words around it.
//
// Replies go wrong in many ways — no code, two different versions, a block cut off by
// the token limit, a refusal — and each must become a clear per-candidate failure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace maxcode {

// The most text one candidate may bring (a model's reply, a replay file): a function
// and its helpers fit many times over, and a 50 MB "candidate" would only cost time and
// memory in every record that quotes it.
inline constexpr std::size_t kMaxCandidateBytes = 4u << 20;

struct ParsedReply {
  std::optional<std::string> code;  // helpers + the definition, when usable
  std::string error;                // why not, when code is empty
  std::string rationale;            // the text outside code blocks, trimmed
};

// `finish_reason` is the provider's ("length" = hit the token limit). `original`, the
// target's definition as the file has it, lets a block that only quotes it back be
// passed over. Reasoning sections (<think>...</think>) are not part of the answer.
ParsedReply parse_reply(std::string_view reply, std::string_view function,
                        std::string_view finish_reason = "stop", std::string_view original = {});

}  // namespace maxcode
