#include "runner/profile/command.h"

#include <cstdio>
#include <iostream>

#include "runner/util/files.h"
#include "runner/profile/table.h"
#include "runner/util/json_io.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// A maxcode profile.json (any version) rather than raw profiler output.
bool is_profile_json(const fs::path& file) {
  try {
    const std::string text = read_text(file);
    if (text.empty() || text.front() != '{') return false;
    const nlohmann::json doc = nlohmann::json::parse(text);
    return doc.is_object() && doc.value("format", std::string()).rfind("maxcode-profile", 0) == 0;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

int run_profile(const ProfileOptions& o) {
  Progress progress(stderr, o.quiet);
  try {
    const fs::path config_file = o.config.empty() ? o.repo / ".maxcode.json" : o.config;
    Profile profile;
    if (o.imports.size() == 1 && is_profile_json(o.imports.front())) {
      // A profile.json written before: its table again (another --top, --min-share).
      profile = profile_from_json(nlohmann::json::parse(read_text(o.imports.front())), o.imports.front().string());
    } else if (!o.imports.empty()) {
      // Imports need no build: the config only contributes its scope, when there is one.
      std::error_code ec;
      ScopeConfig scope;
      if (fs::exists(config_file, ec)) scope = load_config(config_file).scope;
      profile = profile_imports(o, scope);
    } else {
      const Config config = load_config(config_file);
      profile = profile_benchmarks(o, config, progress);
    }
    fs::create_directories(o.out);
    write_text(o.out / "profile.json", dump_json(to_json(profile), 2) + "\n");
    std::cout << render_profile_table(profile, o.top, o.min_share) << std::flush;
    progress.note("wrote " + (o.out / "profile.json").string());
  } catch (const std::exception& e) {
    progress.note(std::string("maxcode: error: ") + e.what());
    return 1;
  }
  return 0;
}

}  // namespace maxcode
