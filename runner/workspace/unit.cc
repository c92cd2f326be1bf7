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

Unit build_unit(std::string_view text, const std::string& file, const Extent& target,
                const UnitConfig& config, std::map<std::string, Unresolved>* unresolved) {
  const std::vector<Definition> defs = free_definitions(text);
  auto target_at = std::find_if(defs.begin(), defs.end(),
                                [&](const Definition& d) { return d.extent.begin == target.begin; });
  if (target_at == defs.end())
    throw SourceError("no definition at " + location(file, target.line_begin) + " to build a unit from");
  const std::size_t target_index = static_cast<std::size_t>(target_at - defs.begin());

  std::set<std::size_t> left_out;
  for (const std::string& name : config.leave_out) {
    const std::vector<std::size_t> found = named(text, defs, name);
    if (found.empty())
      throw SourceError("targets.unit.leave_out: '" + name + "' is not a function of " + file);
    if (std::count(found.begin(), found.end(), target_index) > 0)
      throw SourceError("targets.unit.leave_out: '" + name + "' is the target itself, which is always in its unit");
    left_out.insert(found.begin(), found.end());
  }

  Unit unit;
  unit.file = file;
  std::map<std::size_t, std::string> why;  // definition index -> why it is in the unit
  std::deque<std::size_t> queue;
  auto enter = [&](std::size_t i, const std::string& reason) {
    if (why.count(i) || left_out.count(i)) return;
    why[i] = reason;
    queue.push_back(i);
  };
  enter(target_index, "the target");
  for (const std::string& name : config.add) {
    const std::vector<std::size_t> found = named(text, defs, name);
    if (found.empty())
      throw SourceError("targets.unit.add: '" + name + "' is not a function of " + file +
                        " (a unit stays within its target's file)");
    for (std::size_t i : found) enter(i, "targets.unit.add");
  }

  std::map<std::string, std::vector<std::size_t>> by_name;
  for (std::size_t i = 0; i < defs.size(); ++i) by_name[defs[i].base_name].push_back(i);
  std::set<std::string> noted;
  while (!queue.empty()) {
    const std::size_t i = queue.front();
    queue.pop_front();
    const Definition& caller = defs[i];
    std::set<std::string> pointers;  // function pointers the caller declares
    for (const NameUse& use : name_uses(text, caller.extent)) {
      if (use.kind == NameUse::Kind::kPointerDeclaration) {
        pointers.insert(use.name);
        continue;
      }
      const bool through_pointer = use.kind == NameUse::Kind::kPointerCall ||
                                   (use.kind == NameUse::Kind::kCall && pointers.count(use.name));
      if (through_pointer) {
        const std::string note = location(file, use.line) + ": " + caller.extent.name +
                                 " calls through a pointer (" + use.name +
                                 "); maxcode cannot tell which function that reaches, so none joins "
                                 "the unit: name one of this file in targets.unit.add to let "
                                 "candidates change it";
        if (noted.insert(note).second) unit.notes.push_back(note);
        continue;
      }
      auto callees = by_name.find(use.name);
      if (callees == by_name.end()) {
        if (use.kind != NameUse::Kind::kValue && unresolved && !unresolved->count(use.name))
          (*unresolved)[use.name] = {caller.extent.name, use.line};
        continue;
      }
      for (std::size_t callee : callees->second) {
        if (callee == i) continue;
        if (left_out.count(callee)) {
          const std::string note = defs[callee].extent.name + " (" + verb(use.kind) + caller.extent.name +
                                   ") is left out of the unit by targets.unit.leave_out";
          if (noted.insert(note).second) unit.notes.push_back(note);
          continue;
        }
        if (use.kind == NameUse::Kind::kValue && !why.count(callee)) {
          const std::string note = location(file, use.line) + ": " + caller.extent.name + " passes " +
                                   use.name + " as a pointer; maxcode put " + use.name +
                                   " into the unit (targets.unit.leave_out keeps it out)";
          if (noted.insert(note).second) unit.notes.push_back(note);
        }
        enter(callee, verb(use.kind) + caller.extent.name);
      }
    }
  }

  auto function = [&](std::size_t index) {
    return UnitFunction{defs[index].extent.name, defs[index].base_name, defs[index].extent, why[index]};
  };
  unit.functions.push_back(function(target_index));
  for (const auto& [index, reason] : why)  // std::map: file order
    if (index != target_index) unit.functions.push_back(function(index));
  return unit;
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
