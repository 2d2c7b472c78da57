// Line tables: file:line → addresses, address → line, the current line's range, prologue ends.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "internal.hpp"
#include "strata/native/symbols/object_symbols.hpp"

namespace strata::native::symbols {

namespace {

// "src/a.c" matches "/home/u/proj/src/a.c" at a path-component boundary; absolute
// queries must match the whole path.
bool pathMatches(std::string_view query, std::string_view candidate) {
  if (query.empty()) return false;
  if (query.front() == '/') return candidate == query;
  if (candidate == query) return true;
  return candidate.size() > query.size() && candidate.ends_with(query) &&
         candidate[candidate.size() - query.size() - 1] == '/';
}

}  // namespace

const CuLines* ObjectSymbols::linesOf(Dwarf_Off cuOffset) {
  if (auto it = lines_.find(cuOffset); it != lines_.end()) return &it->second;
  if (dwarf() == nullptr) return nullptr;
  CuLines& out = lines_[cuOffset];
  Dwarf_Die cu;
  Dwarf_Lines* lines = nullptr;
  std::size_t count = 0;
  if (dwarf_offdie(dwarf(), cuOffset, &cu) == nullptr || dwarf_getsrclines(&cu, &lines, &count) != 0)
    return &out;  // a CU without a line table simply has no rows
  std::unordered_map<const char*, std::uint32_t> fileIndex;
  const char* compDir = detail::compDirOf(&cu);
  out.rows.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    Dwarf_Line* line = dwarf_onesrcline(lines, i);
    if (line == nullptr) continue;
    LineRow row;
    Dwarf_Addr addr = 0;
    if (dwarf_lineaddr(line, &addr) != 0) continue;
    row.address = addr;
    int n = 0;
    if (dwarf_lineno(line, &n) == 0) row.line = n;
    if (dwarf_linecol(line, &n) == 0) row.column = n;
    bool flag = false;
    if (dwarf_linebeginstatement(line, &flag) == 0) row.isStmt = flag;
    if (dwarf_lineendsequence(line, &flag) == 0) row.endSequence = flag;
    const char* src = dwarf_linesrc(line, nullptr, nullptr);
    if (src == nullptr) src = "";
    auto [it, inserted] = fileIndex.emplace(src, static_cast<std::uint32_t>(out.files.size()));
    if (inserted) out.files.push_back(detail::sourcePath(src, compDir));
    row.file = it->second;
    out.rows.push_back(row);
  }
  return &out;
}

std::vector<Dwarf_Off> ObjectSymbols::cusForFile(std::string_view file) {
  // No line table names a file of that name at all (gcc's DWARF 5 keeps the names in
  // .debug_line_str, DWARF 4 inline in .debug_line): then libc's DWARF is not even opened.
  std::size_t slash = file.rfind('/');
  std::string base(file.substr(slash == std::string_view::npos ? 0 : slash + 1));
  base += '\0';
  auto named = debugSectionHolds(".debug_line_str", base);
  if (!named) named = debugSectionHolds(".debug_line", base);
  if (named && !*named) return {};
  loadCuHeaders();
  std::vector<Dwarf_Off> primary;
  for (const CuHeader& h : cus_)
    if (pathMatches(file, h.name)) primary.push_back(h.offset);
  if (!primary.empty()) return primary;
  // A header or an included file: any CU may hold code for it.
  std::vector<Dwarf_Off> all;
  for (const CuHeader& h : cus_) all.push_back(h.offset);
  return all;
}

void ObjectSymbols::collectInlineRanges(Dwarf_Die* parent, int depth, std::vector<InlineRange>& out) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_inlined_subroutine) {
      Dwarf_Addr base = 0, start = 0, end = 0;
      ptrdiff_t offset = 0;
      while ((offset = dwarf_ranges(&child, offset, &base, &start, &end)) > 0)
        out.push_back(InlineRange{start, end, depth, dwarf_dieoffset(&child)});
      collectInlineRanges(&child, depth + 1, out);
    } else if (tag == DW_TAG_lexical_block) {
      collectInlineRanges(&child, depth, out);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

std::uint64_t ObjectSymbols::groupKeyOf(std::uint64_t address) {
  // The innermost function or inlined copy holding the address: one breakpoint per instance.
  Dwarf_Die cu;
  if (!cuForAddress(address, &cu)) return address;
  Dwarf_Die* scopes = nullptr;
  int n = dwarf_getscopes(&cu, address, &scopes);
  std::uint64_t key = address;
  for (int i = 0; i < n; ++i) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
      key = dwarf_dieoffset(&scopes[i]);
      break;
    }
  }
  free(scopes);
  return key;
}

Result<LineAddresses> ObjectSymbols::addressesForLine(std::string_view file, int line) {
  if (!hasDebugInfo()) return Error{errors::kNoDebugInfo, path_ + " has no debug information", true};
  std::vector<Dwarf_Off> cus = cusForFile(file);
  struct Hit {
    std::uint64_t address;
    int line;
    std::string file;
  };
  std::vector<Hit> hits;
  int best = 0;
  for (Dwarf_Off off : cus) {
    const CuLines* lines = linesOf(off);
    if (lines == nullptr) continue;
    std::vector<bool> fileOk(lines->files.size());
    bool any = false;
    for (std::size_t i = 0; i < lines->files.size(); ++i) any |= (fileOk[i] = pathMatches(file, lines->files[i]));
    if (!any) continue;
    for (const LineRow& row : lines->rows) {
      if (!row.isStmt || row.endSequence || !fileOk[row.file] || row.line < line) continue;
      if (best != 0 && row.line > best) continue;
      if (row.line < best || best == 0) {
        hits.clear();
        best = row.line;
      }
      hits.push_back(Hit{row.address, row.line, lines->files[row.file]});
    }
  }
  if (hits.empty())
    return Error{errors::kNoCodeAtLine, "no code at or after line " + std::to_string(line) + " of " + std::string(file) + " in " + path_, true};
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.address < b.address; });
  LineAddresses out;
  out.requestedLine = line;
  out.line = best;
  out.file = hits.front().file;
  // The lowest address per function or inlined copy: a `for` line stops once, not at each
  // of its condition and increment blocks. Inlined copies are told apart by walking each
  // function's inline tree once, not by a scope lookup per address.
  std::set<std::uint64_t> seenGroups;
  std::map<std::uint64_t, std::vector<InlineRange>> inlineTrees;  // by function low
  for (const Hit& h : hits) {
    if (!out.addresses.empty() && out.addresses.back() == h.address) continue;
    std::uint64_t key = h.address;
    Dwarf_Die cu;
    if (cuForAddress(h.address, &cu)) {
      if (auto f = subprogramAt(&cu, h.address)) {
        key = f->dieOffset;
        auto [it, fresh] = inlineTrees.try_emplace(f->low);
        Dwarf_Die fn;
        if (fresh && dwarf_offdie(dwarf(), f->dieOffset, &fn) != nullptr) collectInlineRanges(&fn, 1, it->second);
        int bestDepth = 0;
        for (const InlineRange& r : it->second)
          if (h.address >= r.low && h.address < r.high && r.depth > bestDepth) {
            bestDepth = r.depth;
            key = r.offset;
          }
      }
    }
    if (!seenGroups.insert(key).second) continue;
    out.addresses.push_back(h.address);
  }
  return out;
}

namespace {

// Index of the row whose range holds the address, or -1.
long rowFor(const CuLines& lines, std::uint64_t address) {
  const auto& rows = lines.rows;
  auto it = std::upper_bound(rows.begin(), rows.end(), address,
                             [](std::uint64_t a, const LineRow& r) { return a < r.address; });
  if (it == rows.begin()) return -1;
  long i = (it - rows.begin()) - 1;
  // Several rows can share an address (an end_sequence and the next sequence's start);
  // the last real row at that address describes it.
  long j = i;
  while (j >= 0 && rows[j].address == rows[i].address) {
    if (!rows[j].endSequence) return j;
    --j;
  }
  return -1;
}

// The line table of the CU that holds the address, and the index of its row there.
struct RowAt {
  const CuLines* lines;
  long index;
  const LineRow& row() const { return lines->rows[index]; }
  SourceLocation location() const { return SourceLocation{lines->files[row().file], row().line, row().column}; }
};

std::optional<RowAt> rowAt(ObjectSymbols& symbols, std::uint64_t address) {
  Dwarf_Die cu;
  if (!symbols.cuForAddress(address, &cu)) return std::nullopt;
  const CuLines* lines = symbols.linesOf(dwarf_dieoffset(&cu));
  if (lines == nullptr) return std::nullopt;
  long i = rowFor(*lines, address);
  if (i < 0) return std::nullopt;
  return RowAt{lines, i};
}

}  // namespace

std::optional<SourceLocation> ObjectSymbols::locationForAddress(std::uint64_t address) {
  auto at = rowAt(*this, address);
  if (!at) return std::nullopt;
  return at->location();
}

std::optional<LineRange> ObjectSymbols::lineRange(std::uint64_t address) {
  auto at = rowAt(*this, address);
  if (!at) return std::nullopt;
  const auto& rows = at->lines->rows;
  const long i = at->index;
  const LineRow& row = at->row();
  auto sameLine = [&](const LineRow& r) { return !r.endSequence && r.line == row.line && r.file == row.file; };
  long lo = i;
  while (lo > 0 && sameLine(rows[lo - 1])) --lo;
  long hi = i + 1;
  while (hi < static_cast<long>(rows.size()) && sameLine(rows[hi])) ++hi;
  LineRange out;
  out.low = rows[lo].address;
  out.high = hi < static_cast<long>(rows.size()) ? rows[hi].address : rows[i].address + 1;
  out.location = at->location();
  return out;
}

std::uint64_t ObjectSymbols::afterPrologue(const FunctionInfo& function) {
  Dwarf_Die cu;
  if (!function.hasDebugInfo || !cuForAddress(function.entry, &cu)) return function.entry;
  const CuLines* lines = linesOf(dwarf_dieoffset(&cu));
  if (lines == nullptr) return function.entry;
  std::uint64_t end = function.high > function.low ? function.high : function.entry + 1;
  auto it = std::upper_bound(lines->rows.begin(), lines->rows.end(), function.entry,
                             [](std::uint64_t a, const LineRow& r) { return a < r.address; });
  for (; it != lines->rows.end() && it->address < end; ++it) {
    if (it->endSequence) break;
    if (it->isStmt && it->address > function.entry && it->line != 0) return it->address;
  }
  return function.entry;
}

}  // namespace strata::native::symbols
