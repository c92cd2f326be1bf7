// The `.maxcode.json` that `maxcode init` proposes for a scanned repository, and its
// text: JSON with `//` comments that say where each choice came from, and a "$schema"
// for editors (docs/schema/maxcode.schema.json). load_config reads it back unchanged.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/util/error.h"
#include "runner/workspace/project_scan.h"

namespace maxcode {

// Where editors find the schema (its "$id").
inline constexpr const char* kConfigSchemaUrl = "https://maxcode.dev/schema/maxcode.schema.json";

// The repository has nothing maxcode can time. The message says what was looked for
// and what to write.
class NoBenchmarkError : public Error {
 public:
  using Error::Error;
};

struct ProposedConfig {
  // Top-level fields in the order they are written, each with the comment lines above it.
  std::vector<std::pair<std::string, nlohmann::ordered_json>> fields;
  std::vector<std::vector<std::string>> comments;  // parallel to `fields`
  // What maxcode could not choose: lines for the person, printed after the check.
  std::vector<std::string> decisions;
};

// Throws NoBenchmarkError when the scan found no benchmark; the build must be CMake or
// make (else the same error says so).
ProposedConfig propose_config(const ProjectScan& scan);

// The file's text: a header, then one field per line (benchmarks one per line), each
// under its comments.
std::string render_config(const ProposedConfig& config);

// The message of NoBenchmarkError for `scan`.
std::string no_benchmark_message(const ProjectScan& scan);

}  // namespace maxcode
