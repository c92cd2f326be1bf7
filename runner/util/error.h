// The one base of maxcode's exceptions: a message and whether the failure may pass if
// the same work is tried again later (a rate limit, a server error, a dropped
// connection) or will fail the same way (a bad config, a 404, a refused permission).
//
// A queue that defers work asks `retryable()` instead of guessing from the exception's
// type or its text. Each error class decides its own flag where it knows why it failed
// (GithubError from GitHub's status and rate-limit headers, GitError always: a fetch or
// push fails on the network). Wrapping an error with what was being done keeps the flag
// and the cause, so a caller higher up still finds both.
#pragma once

#include <concepts>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

namespace maxcode {

enum class Retryable { kNo, kYes };

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, Retryable retryable = Retryable::kNo)
      : std::runtime_error(message), retryable_(retryable) {}

  // `cause` with `context` in front: what() is "<context>: <cause's what()>", the flag
  // is the cause's (no for an exception that is not an Error), and cause() is a copy of
  // the original with its type kept.
  template <class E>
    requires std::derived_from<E, std::exception>
  Error(const std::string& context, const E& cause)
      : std::runtime_error(context + ": " + cause.what()),
        retryable_(retryable_of(cause)),
        cause_(std::make_shared<const E>(cause)) {}

  // Virtual: an error whose answer depends on fields set after construction (GitHub's
  // headers) computes it from them.
  virtual bool retryable() const { return retryable_ == Retryable::kYes; }

  // The error this one wraps, or null.
  const std::exception* cause() const noexcept { return cause_.get(); }
  virtual ~Error() = default;

 private:
  static Retryable retryable_of(const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    return error && error->retryable() ? Retryable::kYes : Retryable::kNo;
  }

  Retryable retryable_;
  std::shared_ptr<const std::exception> cause_;
};

// `e` itself when it is an E, else the first E among the causes it wraps; null if none.
// For the details a caller needs beyond the flag (GitHub's retry-after header).
template <class E>
const E* find_error(const std::exception& e) {
  for (const std::exception* at = &e; at;) {
    if (const auto* found = dynamic_cast<const E*>(at)) return found;
    const auto* error = dynamic_cast<const Error*>(at);
    at = error ? error->cause() : nullptr;
  }
  return nullptr;
}

}  // namespace maxcode
