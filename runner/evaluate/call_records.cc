#include "runner/evaluate/call_records.h"

#include "runner/util/beneath.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// calls.txt, line by line: one method per kind of record. Every error names the file and
// the line, so a candidate that writes garbage there is told apart from a failed run.
class CallsFile {
 public:
  CallsFile(const fs::path& dir, const fs::path& path) : dir_(dir), path_(path) {}

  std::vector<CallRecord> read(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      ++number_;
      std::istringstream words(line);
      std::string kind;
      long call = 0;
      if (!(words >> kind >> call)) {
        if (line.empty()) continue;
        fail("unreadable line '" + line + "'");
      }
      if (call < 0) fail("negative call number");
      if (kind == "call")
        read_call(call, words);
      else if (kind == "post")
        read_post(call, words);
      else if (kind == "probe")
        read_probe(call, words);
      else if (kind == "extent")
        read_extent(call, words);
      else if (kind == "arg")
        read_arg(call, words);
      else if (kind == "out")
        read_out(call, words);
      else
        fail("unknown record '" + kind + "'");
    }
    std::vector<CallRecord> records;
    for (auto& [call, record] : calls_) {
      if (call != static_cast<long>(records.size())) fail("call " + std::to_string(records.size()) + " missing");
      records.push_back(std::move(record));
    }
    return records;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error(path_.string() + ":" + std::to_string(number_) + ": " + why);
  }

  CallRecord& current(long call) {
    auto it = calls_.find(call);
    if (it == calls_.end()) fail("record for call " + std::to_string(call) + " before its call line");
    return it->second;
  }

  void read_call(long call, std::istringstream& words) {
    long long ns = 0, pre = 0, cpu = -1;
    if (!(words >> ns)) fail("call without a time");
    CallRecord record;
    record.call = call;
    record.seconds = static_cast<double>(ns) * 1e-9;
    if (words >> pre) record.overhead_s = static_cast<double>(pre) * 1e-9;
    if (words >> cpu && cpu >= 0) record.cpu_s = static_cast<double>(cpu) * 1e-9;
    if (!calls_.emplace(call, std::move(record)).second) fail("call " + std::to_string(call) + " recorded twice");
  }

  void read_post(long call, std::istringstream& words) {
    long long ns = 0;
    if (!(words >> ns)) fail("post without a time");
    current(call).overhead_s += static_cast<double>(ns) * 1e-9;
  }

  void read_probe(long call, std::istringstream& words) {
    long long ns = 0, gap = 0;
    if (!(words >> ns >> gap)) fail("short probe record");
    CallRecord& r = current(call);
    if (r.probed) fail("call " + std::to_string(call) + " probed twice");
    r.probed = true;
    r.probe_s = static_cast<double>(ns) * 1e-9;
    r.probe_gap_s = static_cast<double>(gap) * 1e-9;
  }

  void read_extent(long call, std::istringstream& words) {
    CallExtent x;
    if (!(words >> x.name >> x.bytes)) fail("short extent record");
    current(call).extents.push_back(x);
  }

  void read_arg(long call, std::istringstream& words) {
    CallArg a;
    std::string role;
    if (!(words >> a.name >> role >> a.pointer >> a.count >> a.entry_hash >> a.exit_hash)) fail("short arg record");
    a.input = role == "in";
    current(call).args.push_back(a);
  }

  void read_out(long call, std::istringstream& words) {
    CallOutput o;
    if (!(words >> o.name >> o.type)) fail("short out record");
    // Element types may be two words ("unsigned char"): the three numbers come last.
    std::vector<std::string> rest;
    for (std::string w; words >> w;) rest.push_back(w);
    if (rest.size() < 3) fail("short out record");
    for (std::size_t i = 0; i + 3 < rest.size(); ++i) o.type += " " + rest[i];
    try {
      o.kept = std::stoull(rest[rest.size() - 3]);
      o.stride = std::stoull(rest[rest.size() - 2]);
      o.offset = std::stoull(rest[rest.size() - 1]);
    } catch (const std::exception&) {
      fail("unreadable numbers in an out record");
    }
    if (o.name.find('/') != std::string::npos || o.name.find("..") != std::string::npos) fail("bad output name");
    o.file = dir_ / ("out-" + std::to_string(call) + "-" + o.name + ".bin");
    current(call).outputs.push_back(o);
  }

  const fs::path& dir_;
  const fs::path& path_;
  std::map<long, CallRecord> calls_;
  std::size_t number_ = 0;
};

}  // namespace

std::vector<CallRecord> read_call_records(const fs::path& dir, const fs::path& root_or_dir) {
  const fs::path root = root_or_dir.empty() ? dir : root_or_dir;
  const fs::path path = dir / "calls.txt";
  // Written by the benchmark's process, where candidate code runs: never followed
  // through a link (at the file or at any directory between it and the root), never
  // read past a bound.
  std::string text;
  try {
    text = read_beneath(root, path, 256u << 20);
  } catch (const BeneathError& e) {
    if (e.kind() == BeneathError::Kind::kMissing) return {};
    throw;  // a link, a FIFO, too large: the caller tells tampering from a failed run
  }
  return CallsFile(dir, path).read(text);
}

std::vector<double> call_work_seconds(const std::vector<CallRecord>& records) {
  std::vector<double> out;
  for (const CallRecord& r : records) out.push_back(r.cpu_s >= 0 ? std::min(r.seconds, r.cpu_s) : r.seconds);
  return out;
}

double shim_overhead_s(const std::vector<CallRecord>& records) {
  double total = 0;
  for (const CallRecord& r : records) total += r.overhead_s;
  return total;
}

}  // namespace maxcode
