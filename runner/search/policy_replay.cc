// The `replay` policy: candidates written beforehand (by hand, or recorded from an
// earlier search), one per file.
#include <algorithm>
#include <set>

#include "runner/util/files.h"
#include "runner/search/policy.h"
#include "runner/search/reply.h"
#include "runner/workspace/patch.h"
#include "runner/workspace/source_extent.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

bool looks_like_diff(const std::string& text) {
  return text.rfind("diff --git ", 0) == 0 || text.rfind("--- ", 0) == 0 ||
         (text.find("\n--- ") != std::string::npos && text.find("\n+++ ") != std::string::npos &&
          text.find("\n@@ ") != std::string::npos);
}

// The candidate files of a replay directory, in name order (hidden files and a README
// are not candidates).
std::vector<fs::path> candidate_files(const fs::path& directory) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) throw PolicyError("replay directory " + directory.string() + " does not exist");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.empty() || name[0] == '.' || name == "README.md") continue;
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class ReplayPolicy : public Policy {
 public:
  explicit ReplayPolicy(const fs::path& directory) : files_(candidate_files(directory)) {
    if (files_.empty())
      throw PolicyError("replay directory " + directory.string() + " holds no candidate files");
  }

  std::string name() const override { return "replay"; }

  // After a resume: the files the earlier session evaluated are done (issue 22: a
  // resumed replay search started again from the first file, spent its budget on
  // repeats and ended with no winner where the uninterrupted run won).
  void resume(const SearchState& state) override {
    std::set<std::string> done;
    for (const TrajectoryEntry& e : state.trajectory) done.insert(e.candidate.id);
    files_.erase(std::remove_if(files_.begin(), files_.end(),
                                [&](const fs::path& f) { return done.count(f.filename().string()) > 0; }),
                 files_.end());
  }

  std::vector<Candidate> propose(const SearchState&, int count) override {
    std::vector<Candidate> out;
    while (next_ < files_.size() && static_cast<int>(out.size()) < count)
      out.push_back(read_candidate_file(files_[next_++], "replay"));
    return out;
  }

 private:
  std::vector<fs::path> files_;
  std::size_t next_ = 0;
};

}  // namespace

bool replay_reaches(const fs::path& directory, const std::vector<std::string>& unit_names, const std::string& file) {
  for (const fs::path& path : candidate_files(directory)) {
    Candidate c;
    try {
      c = read_candidate_file(path, "replay");
      if (c.diff) (void)files_in_diff(*c.diff);
    } catch (const std::exception&) {
      return true;  // unreadable here: the search says why, as a rejected candidate
    }
    if (c.error) return true;
    if (c.definition)
      for (const std::string& name : unit_names)
        if (!find_definitions(*c.definition, name).empty()) return true;
    if (c.diff)
      for (const auto& touched : files_in_diff(*c.diff))
        for (const std::string& p : {touched.old_path, touched.new_path})
          if (!p.empty() && (p == file || (p.size() > file.size() && p.compare(p.size() - file.size(), file.size(), file) == 0 &&
                                           p[p.size() - file.size() - 1] == '/')))
            return true;
  }
  return false;
}

Candidate read_candidate_file(const fs::path& file, const std::string& origin) {
  Candidate c;
  c.id = file.filename().string();
  c.origin = origin;
  c.note = file.string();
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (!ec && size > kMaxCandidateBytes) {
    c.error = "the file is " + std::to_string(size) + " bytes; a candidate is at most " +
              std::to_string(kMaxCandidateBytes >> 20) + " MiB";
    return c;
  }
  const std::string text = read_text(file);
  if (looks_like_diff(text)) {
    c.diff = text;
  } else {
    // The definition replaces text that ends at its closing brace.
    c.definition = text.substr(0, text.find_last_not_of(" \t\r\n") + 1);
  }
  return c;
}

std::unique_ptr<Policy> make_replay_policy(const fs::path& directory) {
  return std::make_unique<ReplayPolicy>(directory);
}

}  // namespace maxcode
