#include "runner/workspace/unit.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "runner/util/files.h"
#include "runner/util/glob.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// The definitions at namespace scope: those a candidate can redefine in place. A member
// defined inside its class stays with the class.
std::vector<Definition> free_definitions(std::string_view text) {
  std::vector<Definition> out;
  for (Definition& d : list_definitions(text))
    if (!d.in_class) out.push_back(std::move(d));
  return out;
}

// Indices of the definitions that `name` (qualified or not) names.
std::vector<std::size_t> named(std::string_view text, const std::vector<Definition>& defs,
                               const std::string& name) {
  std::vector<std::size_t> out;
  for (const Extent& e : find_definitions(text, name)) {
    for (std::size_t i = 0; i < defs.size(); ++i)
      if (defs[i].extent.begin == e.begin) out.push_back(i);
  }
  return out;
}

std::string verb(NameUse::Kind kind) {
  switch (kind) {
    case NameUse::Kind::kLaunch: return "launched by ";
    case NameUse::Kind::kValue: return "passed as a pointer by ";
    default: return "called by ";
  }
}

std::string location(const std::string& file, std::size_t line) { return file + ":" + std::to_string(line); }

// A name the unit calls that the file does not define: perhaps another file does.
struct Unresolved {
  std::string caller;
  std::size_t line;
};

// The unit's walk: from the target along the calls it makes within the file, a
// definition entering once, with the reason it entered; what the walk cannot follow
// (a call through a pointer, a name left out) becomes a note.
class UnitWalk {
 public:
  UnitWalk(std::string_view text, const std::string& file, std::map<std::string, Unresolved>* unresolved)
      : text_(text), file_(file), defs_(free_definitions(text)), unresolved_(unresolved) {
    for (std::size_t i = 0; i < defs_.size(); ++i) by_name_[defs_[i].base_name].push_back(i);
    unit_.file = file;
  }

  Unit walk(const Extent& target, const UnitConfig& config) {
    const std::size_t target_index = index_of(target);
    leave_out(config, target_index);
    enter(target_index, "the target");
    for (const std::string& name : config.add) {
      const std::vector<std::size_t> found = named(text_, defs_, name);
      if (found.empty())
        throw SourceError("targets.unit.add: '" + name + "' is not a function of " + file_ +
                          " (a unit stays within its target's file)");
      for (std::size_t i : found) enter(i, "targets.unit.add");
    }
    while (!queue_.empty()) {
      const std::size_t i = queue_.front();
      queue_.pop_front();
      visit(i);
    }
    auto function = [&](std::size_t index) {
      return UnitFunction{defs_[index].extent.name, defs_[index].base_name, defs_[index].extent, why_[index]};
    };
    unit_.functions.push_back(function(target_index));
    for (const auto& [index, reason] : why_)  // std::map: file order
      if (index != target_index) unit_.functions.push_back(function(index));
    return unit_;
  }

 private:
  std::size_t index_of(const Extent& target) const {
    auto at =
        std::find_if(defs_.begin(), defs_.end(), [&](const Definition& d) { return d.extent.begin == target.begin; });
    if (at == defs_.end())
      throw SourceError("no definition at " + location(file_, target.line_begin) + " to build a unit from");
    return static_cast<std::size_t>(at - defs_.begin());
  }

  void leave_out(const UnitConfig& config, std::size_t target_index) {
    for (const std::string& name : config.leave_out) {
      const std::vector<std::size_t> found = named(text_, defs_, name);
      if (found.empty()) throw SourceError("targets.unit.leave_out: '" + name + "' is not a function of " + file_);
      if (std::count(found.begin(), found.end(), target_index) > 0)
        throw SourceError("targets.unit.leave_out: '" + name + "' is the target itself, which is always in its unit");
      left_out_.insert(found.begin(), found.end());
    }
  }

  void enter(std::size_t i, const std::string& reason) {
    if (why_.count(i) || left_out_.count(i)) return;
    why_[i] = reason;
    queue_.push_back(i);
  }

  void note(const std::string& text) {
    if (noted_.insert(text).second) unit_.notes.push_back(text);
  }

  // Every name definition `i` uses: what it reaches in the file enters the unit.
  void visit(std::size_t i) {
    const Definition& caller = defs_[i];
    std::set<std::string> pointers;  // function pointers the caller declares
    for (const NameUse& use : name_uses(text_, caller.extent)) {
      if (use.kind == NameUse::Kind::kPointerDeclaration) {
        pointers.insert(use.name);
        continue;
      }
      const bool through_pointer = use.kind == NameUse::Kind::kPointerCall ||
                                   (use.kind == NameUse::Kind::kCall && pointers.count(use.name));
      if (through_pointer) {
        note(location(file_, use.line) + ": " + caller.extent.name + " calls through a pointer (" + use.name +
             "); maxcode cannot tell which function that reaches, so none joins "
             "the unit: name one of this file in targets.unit.add to let "
             "candidates change it");
        continue;
      }
      auto callees = by_name_.find(use.name);
      if (callees == by_name_.end()) {
        if (use.kind != NameUse::Kind::kValue && unresolved_ && !unresolved_->count(use.name))
          (*unresolved_)[use.name] = {caller.extent.name, use.line};
        continue;
      }
      for (std::size_t callee : callees->second)
        if (callee != i) follow(use, caller, callee);
    }
  }

  void follow(const NameUse& use, const Definition& caller, std::size_t callee) {
    if (left_out_.count(callee)) {
      note(defs_[callee].extent.name + " (" + verb(use.kind) + caller.extent.name +
           ") is left out of the unit by targets.unit.leave_out");
      return;
    }
    if (use.kind == NameUse::Kind::kValue && !why_.count(callee))
      note(location(file_, use.line) + ": " + caller.extent.name + " passes " + use.name +
           " as a pointer; maxcode put " + use.name + " into the unit (targets.unit.leave_out keeps it out)");
    enter(callee, verb(use.kind) + caller.extent.name);
  }

  std::string_view text_;
  const std::string& file_;
  const std::vector<Definition> defs_;
  std::map<std::string, Unresolved>* unresolved_;
  std::map<std::string, std::vector<std::size_t>> by_name_;
  std::set<std::size_t> left_out_;
  std::map<std::size_t, std::string> why_;  // definition index -> why it is in the unit
  std::deque<std::size_t> queue_;
  std::set<std::string> noted_;
  Unit unit_;
};

Unit build_unit(std::string_view text, const std::string& file, const Extent& target, const UnitConfig& config,
                std::map<std::string, Unresolved>* unresolved) {
  return UnitWalk(text, file, unresolved).walk(target, config);
}

}  // namespace

std::vector<std::string> Unit::names() const {
  std::vector<std::string> out;
  for (const UnitFunction& f : functions) out.push_back(f.name);
  return out;
}

Unit find_unit(std::string_view text, const std::string& file, const Extent& target,
               const UnitConfig& config) {
  return build_unit(text, file, target, config, nullptr);
}

Unit find_unit(const fs::path& root, const ScopeConfig& scope, const Located& located,
               const UnitConfig& config) {
  const std::string& file = located.target.file;
  const std::string text = read_text(root / file);
  // Listed names this file does not define are looked up in the other files below, so
  // that the error can say where they are; the unit is built from the others.
  UnitConfig here;
  std::map<std::string, std::string> listed_elsewhere;  // name -> "file:line" once found
  for (const auto& [list, kept] : {std::pair{&config.add, &here.add}, std::pair{&config.leave_out, &here.leave_out}}) {
    for (const std::string& name : *list) {
      if (find_definitions(text, name).empty()) listed_elsewhere[name] = "";
      else kept->push_back(name);
    }
  }
  std::map<std::string, Unresolved> unresolved;
  Unit unit = build_unit(text, file, located.extent, here, &unresolved);

  // One pass over the other source files in scope, reading only those that mention a
  // name we look for.
  for (const std::string& path : list_files(root)) {
    if (path == file || !is_source_file(path) || !in_scope(path, scope.include, scope.exclude)) continue;
    const std::string other = read_text(root / path);
    auto mentioned = [&](const std::string& name) { return other.find(name) != std::string::npos; };
    bool any = false;
    for (const auto& [name, _] : unresolved) any = any || mentioned(name);
    for (const auto& [name, _] : listed_elsewhere) any = any || mentioned(name);
    if (!any) continue;
    for (auto& [name, where] : listed_elsewhere) {
      if (!where.empty() || !mentioned(name)) continue;
      const std::vector<Extent> found = find_definitions(other, name);
      if (!found.empty()) where = location(path, found.front().line_begin);
    }
    for (const Definition& d : free_definitions(other)) {
      auto callee = unresolved.find(d.base_name);
      if (callee == unresolved.end()) continue;
      const std::string where = location(path, d.extent.line_begin);
      unit.elsewhere.push_back({d.base_name, where});
      unit.notes.push_back(d.base_name + " (called by " + callee->second.caller + " at " +
                           location(file, callee->second.line) + ") is defined in " + where +
                           ", another file: a unit stays within " + file +
                           ", so candidates may not change it (move it into " + file +
                           " to make it part of the unit)");
      unresolved.erase(callee);  // one note per name, at its first definition
    }
  }
  for (const auto& [name, where] : listed_elsewhere) {
    const bool added = std::count(config.add.begin(), config.add.end(), name) > 0;
    const std::string field = added ? "targets.unit.add" : "targets.unit.leave_out";
    if (where.empty())
      throw SourceError(field + ": '" + name + "' is not a function of " + file +
                        " or of any other source file in scope");
    throw SourceError(field + ": '" + name + "' is defined in " + where + ", not in " + file +
                      ": a unit stays within its target's file and may not span files (move '" + name +
                      "' into " + file + ", or optimize it as a target of its own)");
  }
  return unit;
}

std::string unit_text(std::string_view text, const Unit& unit) {
  std::vector<const Extent*> extents;
  for (const UnitFunction& f : unit.functions) extents.push_back(&f.extent);
  std::sort(extents.begin(), extents.end(), [](const Extent* a, const Extent* b) { return a->begin < b->begin; });
  std::string out;
  for (const Extent* e : extents) {
    if (!out.empty()) out += "\n\n";
    out += text.substr(e->begin, e->end - e->begin);
  }
  return out;
}

}  // namespace maxcode
