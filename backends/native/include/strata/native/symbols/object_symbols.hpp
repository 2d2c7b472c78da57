// Symbols of one ELF file: ELF symbol tables, a lazy DWARF index, line tables and functions.
#pragma once

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libelf.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "strata/demangle.hpp"
#include "strata/elf_file.hpp"
#include "strata/result.hpp"

namespace strata::native::symbols {

// All addresses in this header are link-time addresses of the file (add the load bias
// to get runtime addresses); the module map does that translation.

struct SourceLocation {
  std::string file;  // as the line table names it (absolute when the compiler said so)
  int line = 0;
  int column = 0;
};

struct LineAddresses {
  int requestedLine = 0;
  int line = 0;  // the line actually used: the next line with code when the requested had none
  std::string file;
  std::vector<std::uint64_t> addresses;  // one per function or inlined copy, ascending
};

struct LineRange {
  std::uint64_t low = 0;   // first address of the line's row run containing the address
  std::uint64_t high = 0;  // one past its last address
  SourceLocation location;
};

struct FunctionInfo {
  std::string name;         // qualified, demangled, without parameters: ns::Class::method
  std::string displayName;  // demangled with parameters where known
  std::uint64_t entry = 0;
  std::uint64_t low = 0;
  std::uint64_t high = 0;  // one past the end; low == high when the size is unknown
  bool hasDebugInfo = false;
  Dwarf_Off dieOffset = 0;  // the DW_TAG_subprogram (0 when from the symbol table only)
  bool inlinedCopy = false;  // entry of one inlined copy, not an out-of-line function
};

struct ElfSymbol {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::string name;  // as in the table (mangled for C++)
  bool ifunc = false;  // STT_GNU_IFUNC: the address is the resolver, not the implementation
};

// A PLT stub: the GOT slot it jumps through and the symbol the dynamic linker binds there.
struct PltStub {
  std::uint64_t gotSlot = 0;  // link-time address of the slot
  std::string symbol;         // from .rela.plt / .rela.dyn; empty when no relocation names it
};

// One compilation unit's line rows, in libdw's address order.
struct LineRow {
  std::uint64_t address = 0;
  std::uint32_t file = 0;  // index into CuLines::files
  std::int32_t line = 0;
  std::int32_t column = 0;
  bool isStmt = false;
  bool endSequence = false;
};
struct CuLines {
  std::vector<std::string> files;
  std::vector<LineRow> rows;
};

// Not thread-safe: one owner thread (the engine's or the session's) uses it at a time.
class ObjectSymbols {
 public:
  static Result<std::shared_ptr<ObjectSymbols>> open(const std::string& path);
  ~ObjectSymbols();
  ObjectSymbols(const ObjectSymbols&) = delete;
  ObjectSymbols& operator=(const ObjectSymbols&) = delete;

  const std::string& path() const { return path_; }
  const std::string& buildId() const { return buildId_; }  // hex, empty when absent
  // Whether the file (or its build-id debug file) has DWARF; opening it waits for dwarf().
  bool hasDebugInfo() const { return debugInfo_; }
  // Opened on first use: libdw decompresses every debug section of a file when it opens it
  // (libc's debug file: ~100 ms), so names come from the symbol tables until DWARF is needed.
  Dwarf* dwarf() const;
  bool dwarfOpen() const { return dwarfOpened_; }
  // Opening costs next to nothing: the DWARF is open already, or not compressed.
  bool dwarfCheap() const { return dwarfOpened_ || !debugCompressed_; }
  // Cheap whole-section text search (decompressing only that section): false when a debug
  // section, e.g. ".debug_str" or ".debug_line_str", certainly does not contain `bytes`.
  bool debugSectionMayHold(const char* section, std::string_view bytes) {
    return debugSectionHolds(section, bytes).value_or(true);
  }
  // The same, nullopt when the file has no such section.
  std::optional<bool> debugSectionHolds(const char* section, std::string_view bytes);
  Elf* elf() const { return elf_; }
  // Call frame information (.eh_frame, else .debug_frame); null when the file has neither.
  Dwarf_CFI* cfi();

  // file:line → every address of that line; moves to the next line with code.
  Result<LineAddresses> addressesForLine(std::string_view file, int line);
  std::optional<SourceLocation> locationForAddress(std::uint64_t address);
  std::optional<LineRange> lineRange(std::uint64_t address);
  // The address after the prologue: the function's second line row.
  std::uint64_t afterPrologue(const FunctionInfo& function);

  // Plain, qualified, demangled with or without parameters, or a C symbol.
  Result<std::vector<FunctionInfo>> functionsNamed(std::string_view name);
  std::optional<FunctionInfo> functionAt(std::uint64_t address);
  // The same from the ELF symbol tables only (never opens the DWARF).
  std::optional<FunctionInfo> elfFunctionAt(std::uint64_t address);
  // Scopes holding the address, innermost first: lexical blocks, inlined copies, and last the
  // out-of-line subprogram (unlike dwarf_getscopes, which leaves the inlined copies' callers out).
  std::vector<Dwarf_Die> scopesAt(std::uint64_t address);
  // A global variable with a location, in any CU (index built on first use).
  std::optional<Dwarf_Off> globalVariableNamed(std::string_view name);
  // The nearest ELF symbol at or below the address (for code without debug info).
  std::optional<ElfSymbol> elfSymbolAt(std::uint64_t address);
  std::optional<ElfSymbol> elfSymbolNamed(std::string_view name);
  // The PLT stub (.plt, .plt.sec, .plt.got) whose first instruction is at `address`, if any.
  std::optional<PltStub> pltStubAt(std::uint64_t address);

  // The compilation unit DIE that covers an address (aranges, then CU ranges).
  bool cuForAddress(std::uint64_t address, Dwarf_Die* cu);
  const CuLines* linesOf(Dwarf_Off cuOffset);
  std::size_t cuCount();
  std::vector<Dwarf_Off> cuOffsets();  // every compilation unit's DIE, for a walk over all
  // Out-of-line functions of a CU, sorted by low address (built once per CU).
  const std::vector<FunctionInfo>& functionsOfCu(Dwarf_Die* cu);
  std::size_t parsedCuLineTables() const { return lines_.size(); }

  // Reads bytes of the file image at a link-time address (for disassembly without a process).
  Result<std::vector<std::uint8_t>> readFileBytes(std::uint64_t address, std::size_t size);

 private:
  ObjectSymbols() = default;
  struct CuHeader {
    Dwarf_Off offset = 0;
    std::string name;  // DW_AT_name of the CU
    std::string compDir;
  };
  void loadCuHeaders();
  void loadElfSymbols();
  void loadElfNames();
  void loadDwarfNameIndex();
  bool debugStringsMayName(std::string_view name);  // false: no DIE can be named that
  std::vector<Dwarf_Off> cusForFile(std::string_view file);
  std::optional<FunctionInfo> subprogramAt(Dwarf_Die* cu, std::uint64_t address);
  FunctionInfo describeSubprogram(Dwarf_Die* die);
  std::uint64_t groupKeyOf(std::uint64_t address);
  struct InlineRange {
    std::uint64_t low, high;
    int depth;
    Dwarf_Off offset;
  };
  void collectInlineRanges(Dwarf_Die* parent, int depth, std::vector<InlineRange>& out);
  void addInlinedCopies(Dwarf_Die* cu, Dwarf_Off origin, std::vector<FunctionInfo>& out);

  std::string path_;
  std::string buildId_;
  ElfFile file_;
  ElfFile debugFile_;  // the separate debug file under /usr/lib/debug/.build-id, when there is one
  Elf* elf_ = nullptr;       // file_'s
  Elf* debugElf_ = nullptr;  // debugFile_'s
  mutable Dwarf* dwarf_ = nullptr;
  mutable bool dwarfOpened_ = false;
  bool debugInfo_ = false;
  bool debugCompressed_ = false;  // .debug_info is SHF_COMPRESSED (or .zdebug)
  Elf* dwarfElf_ = nullptr;  // elf_ or debugElf_: the one with .debug_info
  Dwarf_CFI* cfi_ = nullptr;
  bool cfiLoaded_ = false;

  bool cuHeadersLoaded_ = false;
  std::vector<CuHeader> cus_;
  std::map<Dwarf_Off, CuLines> lines_;
  bool allLinesLoaded_ = false;

  bool elfSymbolsLoaded_ = false;
  bool elfNamesLoaded_ = false;
  bool pltLoaded_ = false;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pltRanges_;  // [low, high) of the PLT sections
  std::unordered_map<std::uint64_t, std::string> pltSlotSymbols_;  // GOT slot → symbol
  struct SymbolEntry {
    std::uint64_t address = 0;
    std::uint64_t size = 0;
    const char* name = nullptr;  // in the mapped file's string table
    bool ifunc = false;
  };
  std::vector<SymbolEntry> elfSymbols_;  // functions, by address
  std::unordered_multimap<std::string_view, std::size_t> elfByName_;  // mangled and demangled keys
  std::deque<std::string> nameKeys_;  // demangled keys (stable addresses for the views above)

  std::map<Dwarf_Off, std::vector<FunctionInfo>> cuFunctions_;
  std::unordered_map<std::uint64_t, std::vector<Dwarf_Die>> scopesCache_;  // a breakpoint's pc recurs
  bool globalsLoaded_ = false;
  std::unordered_map<std::string, Dwarf_Off> globalVariables_;
  bool dwarfNamesLoaded_ = false;
  std::map<std::string, std::string_view, std::less<>> debugSections_;  // decompressed, by name
  std::unordered_multimap<std::string, Dwarf_Off> dwarfFunctionsByName_;  // subprogram DIEs
  std::unordered_multimap<std::string, Dwarf_Off> inlineInstancesByName_;  // inlined_subroutine DIEs
};

// One ObjectSymbols per (path, build id), shared by every process that maps the file.
class SymbolCache {
 public:
  Result<std::shared_ptr<ObjectSymbols>> get(const std::string& path);

 private:
  std::map<std::string, std::shared_ptr<ObjectSymbols>> byKey_;
};

// Name helpers shared by the function index and the expression evaluator.
using ::strata::demangle;  // strata/demangle.hpp
std::string stripParameters(std::string_view demangled);
bool nameMatches(std::string_view query, std::string_view qualified);
// The qualified name of a subprogram or inlined_subroutine DIE (through its abstract origin).
std::string qualifiedFunctionName(Dwarf_Die* die);

}  // namespace strata::native::symbols
