// Reading an LLM's reply: the one fenced code block with the new definition of the
// target (helpers may precede it in the same block), and the words around it.
//
// Replies go wrong in many ways — no code, two different versions, a block cut off by
// the token limit, a refusal — and each must become a clear per-candidate failure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace maxcode {

struct ParsedReply {
  std::optional<std::string> code;  // helpers + the definition, when usable
  std::string error;                // why not, when code is empty
  std::string rationale;            // the text outside code blocks, trimmed
};

// `finish_reason` is the provider's ("length" = hit the token limit).
ParsedReply parse_reply(std::string_view reply, std::string_view function,
                        std::string_view finish_reason = "stop");

}  // namespace maxcode
