// A failure that ends a `maxcode run` job before any target is searched; job.json's
// error_kind says which kind ("clone-unreachable", "config", "profile", ...: docs/job.md).
#pragma once

#include <string>
#include <utility>

#include "runner/util/error.h"

namespace maxcode {

struct JobFailure : Error {
  JobFailure(std::string kind, const std::string& message) : Error(message), kind(std::move(kind)) {}
  std::string kind;
};

}  // namespace maxcode
