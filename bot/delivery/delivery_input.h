// A result directory written by `maxcode optimize` (or `maxcode eval`), read and checked
// for delivery: result.json (docs/result-format.md), patch.diff, trajectory.jsonl.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/util/error.h"

namespace maxcode::bot {

class DeliveryError : public Error {
 public:
  using Error::Error;
};

struct DeliveryInput {
  std::filesystem::path dir;
  nlohmann::json result;                 // result.json
  std::string result_text;               // its bytes (the run id is their hash)
  std::string patch;                     // patch.diff
  std::vector<nlohmann::json> trajectory;  // trajectory.jsonl, or result.candidates without it

  // Shortcuts into result.json.
  std::string function() const;
  std::string file() const;        // relative to the directory maxcode ran in
  std::string git_path() const;    // the target file's path in the git repository (from patch.diff)
  std::string commit() const;      // the commit the run started from (may be empty)
  const nlohmann::json& winner() const;
  // The winning candidate's entry in result.candidates (null when missing).
  nlohmann::json winner_candidate() const;
  // A stable id of this run: the first 16 hex digits of SHA-256(result.json).
  std::string run_id() const;
};

// Reads and checks `dir`. Throws DeliveryError saying what is wrong: no result.json,
// not JSON, another schema, no winner (nothing to deliver), no patch.diff, a patch that
// does not touch the target's file, a run made with uncommitted local changes (the
// patch would not apply to the commit it names).
DeliveryInput load_delivery_input(const std::filesystem::path& dir);

}  // namespace maxcode::bot
