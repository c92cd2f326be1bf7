#include "runner/profile/symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "runner/util/names.h"

namespace maxcode {

namespace {

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

// Only the lines shaped like /proc/PID/maps ("start-end perms ..."): gperftools adds
// other lines to its copy, and libdwfl's parser stops at the first it cannot read.
std::string map_lines(const std::string& maps) {
  std::string out;
  std::size_t begin = 0;
  while (begin < maps.size()) {
    std::size_t end = maps.find('\n', begin);
    if (end == std::string::npos) end = maps.size();
    const std::string line = maps.substr(begin, end - begin);
    begin = end + 1;
    const std::size_t dash = line.find('-');
    const std::size_t space = line.find(' ');
    if (dash == 0 || dash == std::string::npos || space == std::string::npos || dash > space) continue;
    if (line.find_first_not_of("0123456789abcdef") != dash) continue;
    out += line + "\n";
  }
  return out;
}

std::string text_attr(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  if (Dwarf_Attribute* a = dwarf_attr_integrate(die, name, &attr))
    if (const char* s = dwarf_formstring(a)) return s;
  return "";
}

// The name of a subprogram or inlined instance: its linkage name demangled (qualified,
// with parameters) when it has one, else its plain name (C, main).
void name_die(Dwarf_Die* die, CodeFrame& frame) {
  std::string linkage = text_attr(die, DW_AT_linkage_name);
  if (linkage.empty()) linkage = text_attr(die, DW_AT_MIPS_linkage_name);
  if (!linkage.empty()) {
    frame.symbol = linkage;
    frame.function = demangle(linkage);
  } else {
    frame.function = text_attr(die, DW_AT_name);
  }
}

std::string module_path(Dwfl_Module* module, Dwarf_Addr* start = nullptr) {
  const char* main_file = nullptr;
  const char* name = dwfl_module_info(module, nullptr, start, nullptr, nullptr, nullptr, &main_file, nullptr);
  if (main_file) return main_file;
  return name ? name : "";
}

// Frames at `addr` inside `module`, innermost first; empty when the module has no
// DWARF for it.
std::vector<CodeFrame> dwarf_frames(Dwfl_Module* module, Dwarf_Addr addr, const std::string& path) {
  std::vector<CodeFrame> out;
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(module, addr, &bias);
  if (!cu) return out;
  // A build that names its sources relatively (c++ src/a.cc) records them relative
  // to the compilation directory.
  const std::string comp_dir = text_attr(cu, DW_AT_comp_dir);
  auto absolute = [&](const char* f) -> std::string {
    std::filesystem::path p(f);
    if (p.is_relative() && !comp_dir.empty()) p = std::filesystem::path(comp_dir) / p;
    return p.lexically_normal().string();
  };
  std::string file;
  int line = 0;
  if (Dwfl_Line* source = dwfl_module_getsrc(module, addr)) {
    if (const char* f = dwfl_lineinfo(source, nullptr, &line, nullptr, nullptr, nullptr)) file = absolute(f);
  }
  Dwarf_Files* files = nullptr;
  std::size_t file_count = 0;
  if (dwarf_getsrcfiles(cu, &files, &file_count) != 0) files = nullptr;
  Dwarf_Die* scopes = nullptr;
  int n = dwarf_getscopes(cu, addr - bias, &scopes);
  if (n > 0) {
    // Past an inlined instance, dwarf_getscopes follows its abstract origin (up to the
    // CU); the function it was inlined into comes from the DIE's own containers.
    Dwarf_Die innermost = scopes[0];
    std::free(scopes);
    scopes = nullptr;
    n = dwarf_getscopes_die(&innermost, &scopes);
  }
  for (int i = 0; i < n; ++i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
    CodeFrame frame;
    frame.module = path;
    frame.file = file;
    frame.line = line;
    name_die(&scopes[i], frame);
    if (const char* decl = dwarf_decl_file(&scopes[i])) frame.decl_file = absolute(decl);
    dwarf_decl_line(&scopes[i], &frame.decl_line);
    frame.inlined = tag == DW_TAG_inlined_subroutine;
    out.push_back(std::move(frame));
    if (tag == DW_TAG_subprogram) break;  // the out-of-line function ends the chain
    // The next level out is the caller, at the line where this was inlined.
    Dwarf_Attribute attr;
    Dwarf_Word value = 0;
    if (files && dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &value) == 0 &&
        value < file_count) {
      if (const char* f = dwarf_filesrc(files, value, nullptr, nullptr)) file = absolute(f);
    }
    if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &value) == 0)
      line = static_cast<int>(value);
  }
  std::free(scopes);
  return out;
}

std::vector<CodeFrame> frames_in(Dwfl_Module* module, Dwarf_Addr addr) {
  Dwarf_Addr start = 0;
  const std::string path = module_path(module, &start);
  GElf_Off offset = 0;
  GElf_Sym sym;
  const char* symbol = dwfl_module_addrinfo(module, addr, &offset, &sym, nullptr, nullptr, nullptr);
  std::vector<CodeFrame> out = dwarf_frames(module, addr, path);
  if (!out.empty()) {
    // The out-of-line function without a linkage name in its DWARF (internal linkage,
    // anonymous namespaces) or without a name at all: the symbol table has it whole.
    if (out.back().symbol.empty() && symbol && !out.back().inlined) {
      out.back().symbol = symbol;
      out.back().function = demangle(symbol);
    }
    for (auto& f : out)
      if (f.function.empty()) f.function = "[inlined]";
    return out;
  }
  CodeFrame frame;
  frame.module = path;
  if (symbol) {
    frame.symbol = symbol;
    frame.function = demangle(symbol);
  } else {
    frame.function = std::filesystem::path(path).filename().string() + "+" + hex(addr - start);
  }
  out.push_back(std::move(frame));
  return out;
}

ModuleInfo module_facts(Dwfl_Module* module) {
  ModuleInfo info;
  Dwarf_Addr bias = 0;
  info.debug_info = dwfl_module_getdwarf(module, &bias) != nullptr;
  GElf_Addr elf_bias = 0;
  if (Elf* elf = dwfl_module_getelf(module, &elf_bias)) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr header;
      if (gelf_getshdr(scn, &header) && header.sh_type == SHT_SYMTAB) info.symbol_table = true;
    }
  }
  // Debug info in a separate file (build-id, debuglink) carries its own .symtab.
  if (info.debug_info) info.symbol_table = true;
  return info;
}

}  // namespace

struct Symbolizer::Impl {
  char* debuginfo_path = nullptr;
  Dwfl_Callbacks callbacks{};
  Dwfl* dwfl = nullptr;
  std::map<Dwfl_Module*, ModuleInfo> modules;

  ~Impl() {
    if (dwfl) dwfl_end(dwfl);
  }
};

Symbolizer::Symbolizer(const std::string& maps) : impl_(std::make_unique<Impl>()) {
  impl_->callbacks.find_elf = dwfl_linux_proc_find_elf;
  impl_->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
  impl_->callbacks.debuginfo_path = &impl_->debuginfo_path;
  impl_->dwfl = dwfl_begin(&impl_->callbacks);
  std::string lines = map_lines(maps);
  if (!impl_->dwfl || lines.empty()) return;
  if (std::FILE* stream = fmemopen(lines.data(), lines.size(), "r")) {
    dwfl_report_begin(impl_->dwfl);
    dwfl_linux_proc_maps_report(impl_->dwfl, stream);
    dwfl_report_end(impl_->dwfl, nullptr, nullptr);
    std::fclose(stream);
  }
}

Symbolizer::~Symbolizer() = default;

const std::vector<CodeFrame>& Symbolizer::frames(std::uint64_t pc, bool return_address) {
  const std::uint64_t key = (pc << 1) | (return_address ? 1 : 0);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const Dwarf_Addr addr = return_address && pc > 0 ? pc - 1 : pc;
  Dwfl_Module* module = impl_->dwfl ? dwfl_addrmodule(impl_->dwfl, addr) : nullptr;
  std::vector<CodeFrame> out;
  if (module) out = frames_in(module, addr);
  if (out.empty()) {
    CodeFrame unknown;
    unknown.function = hex(pc);
    out.push_back(std::move(unknown));
  }
  return cache_.emplace(key, std::move(out)).first->second;
}

bool Symbolizer::return_address_at_sp(std::uint64_t pc) {
  auto [cached, fresh] = at_sp_cache_.try_emplace(pc, false);
  if (!fresh) return cached->second;
  Dwfl_Module* module = impl_->dwfl ? dwfl_addrmodule(impl_->dwfl, pc) : nullptr;
  if (!module) return false;
  GElf_Addr elf_bias = 0;
  Elf* elf = dwfl_module_getelf(module, &elf_bias);
  GElf_Ehdr header;
  if (!elf || !gelf_getehdr(elf, &header) || header.e_machine != EM_X86_64) return false;
  Dwarf_Addr bias = 0;
  Dwarf_CFI* cfi = dwfl_module_eh_cfi(module, &bias);
  if (!cfi) cfi = dwfl_module_dwarf_cfi(module, &bias);
  if (!cfi) return false;
  Dwarf_Frame* frame = nullptr;
  if (dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0 || !frame) return false;
  Dwarf_Op* ops = nullptr;
  std::size_t count = 0;
  bool at_sp = false;
  if (dwarf_frame_cfa(frame, &ops, &count) == 0 && count == 1) {
    constexpr unsigned kRsp = 7;  // DWARF register number on x86-64
    const Dwarf_Op& op = ops[0];
    at_sp = (op.atom == DW_OP_bregx && op.number == kRsp && op.number2 == 8) ||
            (op.atom == DW_OP_breg7 && op.number == 8);
  }
  std::free(frame);
  cached->second = at_sp;
  return at_sp;
}

std::string Symbolizer::module_of(std::uint64_t pc, ModuleInfo* info) {
  Dwfl_Module* module = impl_->dwfl ? dwfl_addrmodule(impl_->dwfl, pc) : nullptr;
  if (!module) return "";
  if (info) {
    auto it = impl_->modules.find(module);
    if (it == impl_->modules.end()) it = impl_->modules.emplace(module, module_facts(module)).first;
    *info = it->second;
  }
  return module_path(module);
}

CallStacks symbolize(const AddressProfile& profile) {
  CallStacks out;
  out.unit = "ns";
  Symbolizer symbolizer(profile.maps);
  for (const AddressStack& stack : profile.stacks) {
    CallStack symbolic;
    symbolic.weight = static_cast<double>(stack.count) * profile.ns_per_sample;
    symbolic.samples = stack.count;
    for (std::size_t i = 0; i < stack.pcs.size(); ++i) {
      // The word at the stack pointer is the caller only when the innermost function
      // has no frame of its own; the frame-pointer chain then lacks it.
      if (profile.sp_word && i == 1 &&
          (stack.pcs[1] == 0 || !symbolizer.return_address_at_sp(stack.pcs[0])))
        continue;
      for (const CodeFrame& frame : symbolizer.frames(stack.pcs[i], i > 0))
        symbolic.frames.push_back(out.intern(frame));
    }
    // Where the time went, per object: which of them lack names or lines matters
    // only in proportion to the samples in them.
    ModuleInfo info;
    const std::string module = symbolizer.module_of(stack.pcs[0], &info);
    if (!module.empty()) {
      ModuleInfo& m = out.modules[module];
      m.debug_info = info.debug_info;
      m.symbol_table = info.symbol_table;
      m.weight += symbolic.weight;
    }
    out.stacks.push_back(std::move(symbolic));
  }
  return out;
}

std::optional<CodeFrame> find_function_by_symbol(const std::string& path, const std::string& symbol) {
  char* debuginfo_path = nullptr;
  Dwfl_Callbacks callbacks{};
  callbacks.find_elf = dwfl_build_id_find_elf;
  callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
  callbacks.section_address = dwfl_offline_section_address;
  callbacks.debuginfo_path = &debuginfo_path;
  Dwfl* dwfl = dwfl_begin(&callbacks);
  if (!dwfl) return std::nullopt;
  std::optional<CodeFrame> result;
  dwfl_report_begin(dwfl);
  Dwfl_Module* module = dwfl_report_offline(dwfl, path.c_str(), path.c_str(), -1);
  dwfl_report_end(dwfl, nullptr, nullptr);
  const int count = module ? dwfl_module_getsymtab(module) : 0;
  for (int i = 0; i < count && !result; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    const char* name = dwfl_module_getsym_info(module, i, &sym, &addr, nullptr, nullptr, nullptr);
    if (!name || symbol != name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
      continue;
    std::vector<CodeFrame> frames = frames_in(module, addr);
    if (!frames.empty()) result = frames.back();  // at its entry: the function itself
  }
  dwfl_end(dwfl);
  return result;
}

}  // namespace maxcode
