// The token scanner that every reader of C, C++ and CUDA source text shares: the
// definitions and name uses of source_extent.cc, the kernel launches of
// runner/profile/launch_sites.cc. Comments and preprocessor lines make no tokens, a
// literal is one token, brackets are paired.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace maxcode::cpp {

inline constexpr std::size_t kNone = static_cast<std::size_t>(-1);

enum class Kind { kWord, kNumber, kLiteral, kPunct, kDirective };

struct Token {
  Kind kind;
  std::size_t begin;
  std::size_t end;
  // A preprocessor line or a blank line stands between this token and the one before:
  // no declaration reaches back over either (`FOO(x)` on a line of its own, then a blank
  // line, is no part of the function below it).
  bool after_break;
};

bool is_space(char c);
bool is_word_char(char c);  // a letter, digit or '_' (or a byte of a UTF-8 name)

// The tokens of `text`; a preprocessor line is one kDirective token when
// `keep_directives`, else none (it only marks a break).
std::vector<Token> lex(std::string_view text, bool keep_directives = false);

// A file's tokens with its brackets paired, and the questions a reader asks of them.
class TokenView {
 public:
  explicit TokenView(std::string_view text) : text_(text), tokens_(lex(text)) { match_brackets(); }

  const std::vector<Token>& tokens() const { return tokens_; }
  std::size_t size() const { return tokens_.size(); }
  std::size_t offset(std::size_t k) const { return tokens_[k].begin; }
  std::string_view str(std::size_t k) const {
    return text_.substr(tokens_[k].begin, tokens_[k].end - tokens_[k].begin);
  }

  // Tokens [from, to) as written, comments dropped and each gap shown as one space.
  std::string joined(std::size_t from, std::size_t to) const {
    std::string out;
    for (std::size_t k = from; k < to; ++k) {
      if (k > from && tokens_[k].begin > tokens_[k - 1].end) out += ' ';
      out += str(k);
    }
    return out;
  }

  bool is(std::size_t k, std::string_view s) const { return k < tokens_.size() && str(k) == s; }
  bool is_word(std::size_t k) const { return k < tokens_.size() && tokens_[k].kind == Kind::kWord; }

  // `<<<` with nothing between its three characters: a kernel launch.
  bool is_launch(std::size_t k) const {
    return is(k, "<") && is(k + 1, "<") && is(k + 2, "<") && tokens_[k + 1].begin == tokens_[k].end &&
           tokens_[k + 2].begin == tokens_[k + 1].end;
  }

  // The partner of the bracket at `k` ((), [] or {}), or kNone.
  std::size_t match(std::size_t k) const { return match_[k]; }
  // Index after the group opened at `k`, or kNone when it never closes.
  std::size_t after_group(std::size_t k) const { return match_[k] == kNone ? kNone : match_[k] + 1; }

  // The `>` closing template arguments opened by the `<` at `k`, before `limit`.
  std::size_t angle_close(std::size_t k, std::size_t limit = kNone) const;

  // The `<` opening template arguments closed by the `>` at `k`.
  std::size_t angle_open(std::size_t k) const;

 protected:
  std::string_view text_;
  std::vector<Token> tokens_;
  std::vector<std::size_t> match_;  // each bracket's partner, kNone when it has none

 private:
  // Pairs (), [] and {}. A closer that does not fit the innermost opener closes the
  // nearest one it fits (the ones inside stay unmatched) or, if none, is ignored: source
  // split by #if branches stays usable around the damage.
  void match_brackets();
};

}  // namespace maxcode::cpp
