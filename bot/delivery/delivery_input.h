// A result directory written by `maxcode optimize` (or `maxcode eval`), read and checked
// for delivery: result.json (docs/result-format.md), patch.diff, trajectory.jsonl.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/core/evaluation.h"
#include "runner/core/run_result.h"
#include "runner/util/error.h"

namespace maxcode::bot {

class DeliveryError : public Error {
 public:
  using Error::Error;
};

struct DeliveryInput {
  std::filesystem::path dir;
  RunResult result;                    // result.json, read by runner/core/run_result.h
  std::string result_text;             // its bytes (the run id is their hash)
  std::string patch;                   // patch.diff
  std::vector<Evaluation> trajectory;  // trajectory.jsonl, or result.candidates without it

  // Shortcuts into result.json.
  const std::string& function() const { return result.target.function; }
  const std::string& file() const { return result.target.file; }  // relative to where maxcode ran
  std::string git_path() const;  // the target file's path in the git repository (from patch.diff)
  const std::string& commit() const { return result.repository.commit; }  // may be empty
  // The winner; load_delivery_input checked that there is one.
  const ResultWinner& winner() const { return *result.winner; }
  // The winning candidate's evaluation in result.candidates (null when missing).
  const Evaluation* winner_candidate() const;
  // A stable id of this run: the first 16 hex digits of SHA-256(result.json).
  std::string run_id() const;
};

// Reads and checks `dir`. Throws DeliveryError saying what is wrong: no result.json,
// not JSON, another schema, a field of the wrong type (named by its path), no winner (nothing to deliver), no
// patch.diff, a patch that does not touch the target's file, a run made with uncommitted local changes (the patch would
// not apply to the commit it names).
DeliveryInput load_delivery_input(const std::filesystem::path& dir);

}  // namespace maxcode::bot
