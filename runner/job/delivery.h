// How `maxcode run` hands a winner to delivery. runner/ never includes bot/: the job
// writes each target's result directory (the files of `maxcode optimize --out`) and
// calls this interface; cli/run.cc implements it with bot::deliver (a pull request, or
// a dry run that writes the PR's branch, title and body). A job whose input says
// delivery "none" needs none: the service opens PRs itself from the result directories.
#pragma once

#include <filesystem>

#include "runner/job/job_record.h"

namespace maxcode {

class Delivery {
 public:
  virtual ~Delivery() = default;
  // Delivers one target's result directory, idempotently (a second call for the same
  // target updates its PR, never opens another). Throws with a one-line reason.
  virtual PrRecord deliver(const std::filesystem::path& result_dir) = 0;
};

}  // namespace maxcode
