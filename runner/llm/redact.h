// Keeps API keys out of error text. Servers echo keys back in their error bodies (OpenAI's
// 401 says "Incorrect API key provided: sk-..."), and that text ends up in reports.
#pragma once

#include <string>

namespace maxcode::llm {

// `text` with the key, and any run of 8 or more of its characters, replaced by
// "[redacted]" (a partly masked key still gives away most of it).
std::string redact(std::string text, const std::string& key);

// At most `max_bytes` of `text` on one line (whitespace runs become one space), cut at a
// UTF-8 character boundary, with "..." when cut.
std::string excerpt(const std::string& text, std::size_t max_bytes = 200);

}  // namespace maxcode::llm
