// Checkpoints: after every search step the state needed to continue is written to
// <out>/checkpoint.json (atomically: a crash never leaves half a file), so that
// `maxcode optimize --resume <out>` goes on where an interrupted run stopped. No API
// key or other secret is ever part of it.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/search/policy.h"

namespace maxcode {

struct Checkpoint {
  std::string run_id;
  std::string policy;
  Target target;
  SearchState state;
  nlohmann::json spend;  // Spend::to_json
  // Where the run read its inputs (absolute; empty when unknown): `--resume DIR` alone
  // takes them, so that the resumed run searches the same repository with the same
  // config and replay directory.
  std::string repository;
  std::string config_file;
  std::string replay_dir;
};

void write_checkpoint(const std::filesystem::path& out, const Checkpoint& checkpoint);
// Throws std::runtime_error naming the file when it is missing or not a checkpoint.
Checkpoint read_checkpoint(const std::filesystem::path& out);

}  // namespace maxcode
