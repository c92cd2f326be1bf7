#include "bot/delivery/delivery_input.h"

#include <sstream>

#include "runner/util/files.h"
#include "runner/util/json_io.h"
#include "runner/workspace/patch.h"

namespace maxcode::bot {

namespace fs = std::filesystem;

namespace {

std::string read_or_empty(const fs::path& path) { return try_read_text(path).value_or(""); }

bool ends_with_path(const std::string& path, const std::string& suffix) {
  return path == suffix ||
         (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0 &&
          path[path.size() - suffix.size() - 1] == '/');
}

}  // namespace

std::string DeliveryInput::git_path() const {
  // maxcode may run in a subdirectory of the git repository; the patch names the path
  // from the repository root.
  for (const DiffFile& f : files_in_diff(patch))
    if (ends_with_path(f.new_path, file())) return f.new_path;
  return file();
}

const Evaluation* DeliveryInput::winner_candidate() const {
  const ResultCandidate* c = result.candidate(winner().id);
  return c ? &c->evaluation : nullptr;
}

std::string DeliveryInput::run_id() const { return sha256_hex(result_text).substr(0, 16); }

DeliveryInput load_delivery_input(const fs::path& dir) {
  DeliveryInput in;
  in.dir = dir;
  if (!fs::is_directory(dir)) throw DeliveryError(dir.string() + ": not a directory (give the --out of `maxcode optimize`)");
  const std::string label = (dir / "result.json").string();
  in.result_text = read_or_empty(dir / "result.json");
  if (in.result_text.empty()) throw DeliveryError(label + ": missing or empty");
  const nlohmann::json parsed = nlohmann::json::parse(in.result_text, nullptr, false);
  if (!parsed.is_object()) throw DeliveryError(label + ": not a JSON object");
  try {
    in.result = run_result_from_json(parsed, label);
  } catch (const RunResultError& e) {
    throw DeliveryError(e.what());
  }
  if (!in.result.winner)
    throw DeliveryError("no winner in " + label + ": nothing to deliver" +
                        (in.result.unconfirmed ? " (" + *in.result.unconfirmed + ")" : ""));
  if (const auto& changes = in.result.repository.local_changes; !changes.empty())
    throw DeliveryError("the run included uncommitted changes (" + dump_json(nlohmann::json(changes)) +
                        "): its patch is against them, not against commit " + in.commit() +
                        "; commit and push them, then run maxcode optimize again");
  if (const std::string& c = in.commit(); !c.empty() && c.size() != 40)
    throw DeliveryError(label + ": repository.commit is not a commit id: " + c);
  in.patch = read_or_empty(dir / "patch.diff");
  if (in.patch.empty()) throw DeliveryError((dir / "patch.diff").string() + ": missing or empty");
  std::vector<DiffFile> files;
  try {
    files = files_in_diff(in.patch);
  } catch (const std::exception& e) {
    throw DeliveryError((dir / "patch.diff").string() + ": " + e.what());
  }
  bool touches_target = false;
  for (const DiffFile& f : files) touches_target = touches_target || ends_with_path(f.new_path, in.file());
  if (!touches_target) throw DeliveryError((dir / "patch.diff").string() + ": does not change " + in.file());

  // trajectory.jsonl is a log written as the search went: a line that is not a whole
  // evaluation (a run killed mid-write) is left out; result.candidates stands in for an
  // empty one.
  std::istringstream lines(read_or_empty(dir / "trajectory.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    try {
      in.trajectory.push_back(evaluation_from_json(j));
    } catch (const std::exception&) {
      continue;  // a line cut short or of another shape: left out
    }
  }
  if (in.trajectory.empty())
    for (const ResultCandidate& c : in.result.candidates) in.trajectory.push_back(c.evaluation);
  return in;
}

}  // namespace maxcode::bot
