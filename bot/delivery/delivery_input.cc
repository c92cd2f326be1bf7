#include "bot/delivery/delivery_input.h"

#include <fstream>
#include <sstream>

#include "runner/util/files.h"
#include "runner/util/json_io.h"
#include "runner/workspace/patch.h"

namespace maxcode::bot {

namespace fs = std::filesystem;

namespace {

std::string read_or_empty(const fs::path& path) { return try_read_text(path).value_or(""); }

std::string field(const nlohmann::json& j, const char* object, const char* key) {
  if (!j.contains(object) || !j[object].is_object()) return "";
  const auto& o = j[object];
  return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

bool ends_with_path(const std::string& path, const std::string& suffix) {
  return path == suffix ||
         (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0 &&
          path[path.size() - suffix.size() - 1] == '/');
}

}  // namespace

std::string DeliveryInput::function() const { return field(result, "target", "function"); }
std::string DeliveryInput::file() const { return field(result, "target", "file"); }
std::string DeliveryInput::commit() const { return field(result, "repository", "commit"); }
const nlohmann::json& DeliveryInput::winner() const { return result.at("winner"); }

std::string DeliveryInput::git_path() const {
  // maxcode may run in a subdirectory of the git repository; the patch names the path
  // from the repository root.
  for (const DiffFile& f : files_in_diff(patch))
    if (ends_with_path(f.new_path, file())) return f.new_path;
  return file();
}

nlohmann::json DeliveryInput::winner_candidate() const {
  const std::string id = winner().value("id", std::string());
  if (result.contains("candidates") && result["candidates"].is_array())
    for (const auto& c : result["candidates"])
      if (c.value("id", std::string()) == id) return c;
  return nullptr;
}

std::string DeliveryInput::run_id() const { return sha256_hex(result_text).substr(0, 16); }

DeliveryInput load_delivery_input(const fs::path& dir) {
  DeliveryInput in;
  in.dir = dir;
  if (!fs::is_directory(dir)) throw DeliveryError(dir.string() + ": not a directory (give the --out of `maxcode optimize`)");
  in.result_text = read_or_empty(dir / "result.json");
  if (in.result_text.empty()) throw DeliveryError((dir / "result.json").string() + ": missing or empty");
  in.result = nlohmann::json::parse(in.result_text, nullptr, false);
  if (!in.result.is_object()) throw DeliveryError((dir / "result.json").string() + ": not a JSON object");
  const std::string schema = in.result.value("schema", std::string());
  if (schema != "maxcode.result/1")
    throw DeliveryError((dir / "result.json").string() + ": schema '" + schema + "', this maxcode reads maxcode.result/1");
  if (in.function().empty() || in.file().empty())
    throw DeliveryError((dir / "result.json").string() + ": target.file and target.function are required");
  if (!in.result.contains("winner") || !in.result["winner"].is_object()) {
    std::string why = in.result.value("unconfirmed", std::string());
    throw DeliveryError("no winner in " + (dir / "result.json").string() + ": nothing to deliver" +
                        (why.empty() ? "" : " (" + why + ")"));
  }
  const auto& w = in.result["winner"];
  if (!w.contains("speedup") || !w["speedup"].is_object() || !w["speedup"].contains("median") ||
      !w.contains("baseline_median_s") || !w.contains("candidate_median_s"))
    throw DeliveryError((dir / "result.json").string() + ": winner lacks speedup or medians");
  if (const auto& changes = in.result["repository"]["local_changes"]; changes.is_array() && !changes.empty())
    throw DeliveryError("the run included uncommitted changes (" + dump_json(changes) +
                        "): its patch is against them, not against commit " + in.commit() +
                        "; commit and push them, then run maxcode optimize again");
  if (const std::string c = in.commit(); !c.empty() && c.size() != 40)
    throw DeliveryError((dir / "result.json").string() + ": repository.commit is not a commit id: " + c);
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

  std::istringstream lines(read_or_empty(dir / "trajectory.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object()) in.trajectory.push_back(std::move(j));
  }
  if (in.trajectory.empty() && in.result.contains("candidates") && in.result["candidates"].is_array())
    for (const auto& c : in.result["candidates"]) in.trajectory.push_back(c);
  return in;
}

}  // namespace maxcode::bot
