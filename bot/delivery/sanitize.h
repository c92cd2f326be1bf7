// Text from a language model or from the repository, made safe to put into a pull
// request: it must not notify anyone, link issues, or render as HTML.
//
// Outside code, `@name` gets a zero-width joiner after the `@` (GitHub then neither
// links nor notifies), `#123` and `GH-123` get one after `#`/`-` (no cross-reference,
// no "closes"), `<` becomes `&lt;` (no raw HTML, no hidden comments that could fake
// maxcode's metadata) and images become plain links (no tracking pixels). Code spans and
// fenced blocks are left as they are, because GitHub renders none of those there; a fence
// the text leaves open is closed, so it cannot swallow the rest of the body.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace maxcode::bot {

// The zero-width joiner (U+200D) in UTF-8.
inline constexpr std::string_view kZeroWidthJoiner = "\xE2\x80\x8D";

// Markdown from an untrusted source, made inert as described above.
std::string sanitize_markdown(std::string_view text);

// One line for a table cell or a sentence: sanitized, newlines folded to spaces, `|`
// escaped, and cut at `limit` bytes (on a UTF-8 boundary) with an ellipsis.
std::string sanitize_inline(std::string_view text, std::size_t limit = 200);

// Plain text that GitHub does not render as Markdown but still links (a PR title):
// mentions and references broken as above, whitespace folded, nothing escaped.
std::string sanitize_plain(std::string_view text, std::size_t limit = 200);

// `text` as a fenced code block that its content cannot close.
std::string code_block(std::string_view text, std::string_view language = "");

// `text` as an inline code span that its content cannot close (no sanitizing needed:
// GitHub renders nothing inside code).
std::string code_span(std::string_view text);

// The longest prefix of `text` of at most `max_bytes` bytes that ends on a UTF-8
// character boundary.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

}  // namespace maxcode::bot
