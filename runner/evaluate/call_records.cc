#include "runner/evaluate/call_records.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace maxcode {

namespace fs = std::filesystem;

std::vector<CallRecord> read_call_records(const fs::path& dir) {
  const fs::path path = dir / "calls.txt";
  std::vector<CallRecord> records;
  std::ifstream in(path);
  if (!in) return records;
  std::string line;
  std::size_t number = 0;
  auto fail = [&](const std::string& why) {
    throw std::runtime_error(path.string() + ":" + std::to_string(number) + ": " + why);
  };
  auto current = [&](long call) -> CallRecord& {
    if (records.empty() || records.back().call != call) fail("record for call " + std::to_string(call) + " out of order");
    return records.back();
  };
  while (std::getline(in, line)) {
    ++number;
    std::istringstream words(line);
    std::string kind;
    long call = 0;
    if (!(words >> kind >> call)) {
      if (line.empty()) continue;
      fail("unreadable line '" + line + "'");
    }
    if (kind == "call") {
      long long ns = 0;
      if (!(words >> ns)) fail("call without a time");
      if (call != static_cast<long>(records.size())) fail("call " + std::to_string(call) + " out of order");
      records.push_back({call, static_cast<double>(ns) * 1e-9, {}, {}});
    } else if (kind == "arg") {
      CallArg a;
      std::string role;
      if (!(words >> a.name >> role >> a.pointer >> a.count >> a.entry_hash >> a.exit_hash)) fail("short arg record");
      a.input = role == "in";
      current(call).args.push_back(a);
    } else if (kind == "out") {
      CallOutput o;
      if (!(words >> o.name >> o.type)) fail("short out record");
      // Element types may be two words ("unsigned char"): the three numbers come last.
      std::vector<std::string> rest;
      for (std::string w; words >> w;) rest.push_back(w);
      if (rest.size() < 3) fail("short out record");
      for (std::size_t i = 0; i + 3 < rest.size(); ++i) o.type += " " + rest[i];
      o.kept = std::stoull(rest[rest.size() - 3]);
      o.stride = std::stoull(rest[rest.size() - 2]);
      o.offset = std::stoull(rest[rest.size() - 1]);
      o.file = dir / ("out-" + std::to_string(call) + "-" + o.name + ".bin");
      current(call).outputs.push_back(o);
    } else {
      fail("unknown record '" + kind + "'");
    }
  }
  return records;
}

std::vector<double> call_seconds(const std::vector<CallRecord>& records) {
  std::vector<double> out;
  for (const CallRecord& r : records) out.push_back(r.seconds);
  return out;
}

}  // namespace maxcode
