// libstdc++ views: std::string, vector, map, unordered_map, unique_ptr, shared_ptr, optional.
#include <cstring>
#include <map>
#include <utility>

#include "internal.hpp"
#include "value_internal.hpp"

namespace strata::native::symbols {

using detail::hexAddress;

namespace {
// Per Dwarf handle; ObjectSymbols drops its entries when it closes, so a later handle at the
// same address never sees stale names.
std::map<std::pair<Dwarf*, Dwarf_Off>, std::string>& typeNameCache() {
  static std::map<std::pair<Dwarf*, Dwarf_Off>, std::string> cache;
  return cache;
}
}  // namespace

void forgetTypeNames(Dwarf* dwarf) {
  auto& cache = typeNameCache();
  auto first = cache.lower_bound({dwarf, 0});
  auto last = first;
  while (last != cache.end() && last->first.first == dwarf) ++last;
  cache.erase(first, last);
}

std::string qualifiedTypeName(Dwarf_Die die) {
  auto& cache = typeNameCache();
  Dwarf* dwarf = dwarf_cu_getdwarf(die.cu);
  auto key = std::make_pair(dwarf, dwarf_dieoffset(&die));
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const char* n = dwarf_diename(&die);
  std::string name = n != nullptr ? n : "<anonymous>";
  int tag = dwarf_tag(&die);
  if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type ||
      tag == DW_TAG_enumeration_type || tag == DW_TAG_typedef) {
    // The DIE tree has no parent links: dwarf_getscopes_die walks the CU once per type.
    Dwarf_Die* scopes = nullptr;
    int count = dwarf_getscopes_die(&die, &scopes);
    for (int i = 1; i < count; ++i) {
      int t = dwarf_tag(&scopes[i]);
      if (t != DW_TAG_namespace && t != DW_TAG_structure_type && t != DW_TAG_class_type && t != DW_TAG_union_type)
        continue;
      const char* s = dwarf_diename(&scopes[i]);
      name = std::string(s != nullptr ? s : "(anonymous namespace)") + "::" + name;
    }
    free(scopes);
  }
  cache.emplace(key, name);
  return name;
}

namespace {

bool templateParam(Dwarf_Die type, int index, Dwarf_Die* out) {
  Dwarf_Die child;
  if (dwarf_child(&type, &child) != 0) return false;
  int i = 0;
  do {
    if (dwarf_tag(&child) != DW_TAG_template_type_parameter) continue;
    if (i++ != index) continue;
    Dwarf_Attribute attr;
    return dwarf_attr(&child, DW_AT_type, &attr) != nullptr && dwarf_formref_die(&attr, out) != nullptr;
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

std::optional<Value> path(const Value& v, std::initializer_list<const char*> members) {
  std::optional<Value> cur = v;
  for (const char* m : members) {
    cur = memberOf(*cur, m);
    if (!cur) return std::nullopt;
  }
  return cur;
}

std::optional<std::uint64_t> pointerAt(const Value& v, std::uint64_t address) {
  std::uint64_t p = 0;
  if (!v.frame->memory->read(address, &p, 8)) return std::nullopt;
  return p;
}

// In-order successor in a libstdc++ red-black tree (_Rb_tree_increment).
std::optional<std::uint64_t> nextNode(const Value& v, std::uint64_t node) {
  auto right = pointerAt(v, node + 24);
  if (!right) return std::nullopt;
  if (*right != 0) {
    node = *right;
    for (int guard = 0; guard < 128; ++guard) {
      auto left = pointerAt(v, node + 16);
      if (!left) return std::nullopt;
      if (*left == 0) return node;
      node = *left;
    }
    return std::nullopt;
  }
  auto parent = pointerAt(v, node + 8);
  for (int guard = 0; parent && guard < 128; ++guard) {
    auto pr = pointerAt(v, *parent + 24);
    if (!pr || node != *pr) break;
    node = *parent;
    parent = pointerAt(v, node + 8);
  }
  if (!parent) return std::nullopt;
  auto nr = pointerAt(v, node + 24);
  return (nr && *nr != *parent) ? *parent : node;
}

std::string startsWithAny(const std::string& name) {
  static const char* prefixes[] = {"std::__cxx11::basic_string<char", "std::basic_string<char", "std::vector<",
                                   "std::map<", "std::unordered_map<", "std::unique_ptr<", "std::shared_ptr<",
                                   "std::optional<"};
  for (const char* p : prefixes)
    if (name.starts_with(p)) return p;
  return "";
}

}  // namespace

std::string simplifyTypeName(std::string name) {
  // Spell libstdc++ types as users write them: std::string, std::vector<int>, std::map<K, V>.
  static const std::string longString =
      "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >";
  for (std::size_t at; (at = name.find(longString)) != std::string::npos;) name.replace(at, longString.size(), "std::string");
  static const char* defaults[] = {"std::allocator<", "std::default_delete<", "std::less<", "std::hash<",
                                   "std::equal_to<", "std::char_traits<"};
  std::string out;
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == ',' && depth > 0 && i + 2 < name.size() && name[i + 1] == ' ') {
      bool isDefault = false;
      for (const char* d : defaults) isDefault |= name.compare(i + 2, std::strlen(d), d) == 0;
      if (isDefault) {
        // Skip this argument up to the ',' or '>' that ends it at the same depth.
        int inner = 0;
        std::size_t j = i + 2;
        for (; j < name.size(); ++j) {
          if (name[j] == '<') ++inner;
          else if (name[j] == '>' && inner-- == 0) break;
          else if (name[j] == ',' && inner == 0) break;
        }
        while (!out.empty() && out.back() == ' ') out.pop_back();
        i = j - 1;
        while (i + 1 < name.size() && name[i + 1] == ' ') ++i;
        continue;
      }
    }
    if (c == '<') ++depth;
    if (c == '>') {
      --depth;
      while (!out.empty() && out.back() == ' ' && out.size() >= 2 && out[out.size() - 2] != '>') out.pop_back();
    }
    out += c;
  }
  return out;
}

std::optional<StlView> stlView(const Value& v) {
  if (!v.type.hasDie || v.location.kind != ValueLocation::Kind::Memory) return std::nullopt;
  Dwarf_Die t = stripCvTypedefs(v.type.die);
  int tag = dwarf_tag(&t);
  if (tag != DW_TAG_structure_type && tag != DW_TAG_class_type) return std::nullopt;
  std::string name = qualifiedTypeName(t);
  std::string kind = startsWithAny(name);
  if (kind.empty() || name.starts_with("std::vector<bool")) return std::nullopt;
  StlView view;
  if (kind.find("basic_string") != std::string::npos) {
    auto p = path(v, {"_M_dataplus", "_M_p"});
    auto len = memberOf(v, "_M_string_length");
    if (!p || !len) return std::nullopt;
    auto address = readPointer(*p);
    auto n = readInteger(*len);
    if (!address || !n) return std::nullopt;
    std::uint64_t shown = std::min<std::uint64_t>(*n, 4096);
    std::string s(shown, '\0');
    if (shown != 0 && !v.frame->memory->read(*address, s.data(), shown)) return std::nullopt;
    Value lit = literalValue(v.frame, TypeRef::of(Builtin::CharPointer), s.data(), s.size());
    view.kind = StlView::Kind::String;
    view.summary = present(lit).value;
    if (shown < static_cast<std::uint64_t>(*n)) view.summary += "...";
    return view;
  }
  if (kind == "std::vector<") {
    auto start = path(v, {"_M_impl", "_M_start"});
    auto finish = path(v, {"_M_impl", "_M_finish"});
    if (!start || !finish || !templateParam(t, 0, &view.elementType)) return std::nullopt;
    auto s = readPointer(*start), f = readPointer(*finish);
    view.elementSize = typeSize(TypeRef::of(view.elementType)).value_or(0);
    if (!s || !f || view.elementSize == 0 || *f < *s) return std::nullopt;
    view.kind = StlView::Kind::Vector;
    view.hasElementType = true;
    view.first = *s;
    view.size = (*f - *s) / view.elementSize;
    view.summary = "{size=" + std::to_string(view.size) + "}";
    return view;
  }
  if (kind == "std::map<") {
    auto tree = memberOf(v, "_M_t");
    if (!tree) return std::nullopt;
    auto count = path(*tree, {"_M_impl", "_M_node_count"});
    auto header = path(*tree, {"_M_impl", "_M_header"});
    if (!count || !header || !templateParam(stripCvTypedefs(tree->type.die), 1, &view.elementType)) return std::nullopt;
    auto n = readInteger(*count);
    auto leftmost = pointerAt(v, header->location.address + 16);
    if (!n || !leftmost) return std::nullopt;
    view.kind = StlView::Kind::Map;
    view.hasElementType = true;
    view.size = static_cast<std::uint64_t>(*n);
    view.first = *leftmost;
    view.summary = "{size=" + std::to_string(view.size) + "}";
    return view;
  }
  if (kind == "std::unordered_map<") {
    auto table = memberOf(v, "_M_h");
    if (!table) return std::nullopt;
    auto count = memberOf(*table, "_M_element_count");
    auto before = path(*table, {"_M_before_begin", "_M_nxt"});
    if (!count || !before || !templateParam(stripCvTypedefs(table->type.die), 1, &view.elementType)) return std::nullopt;
    auto n = readInteger(*count);
    auto first = readPointer(*before);
    if (!n || !first) return std::nullopt;
    view.kind = StlView::Kind::UnorderedMap;
    view.hasElementType = true;
    view.size = static_cast<std::uint64_t>(*n);
    view.first = *first;
    view.summary = "{size=" + std::to_string(view.size) + "}";
    return view;
  }
  if (kind == "std::unique_ptr<" || kind == "std::shared_ptr<") {
    Dwarf_Die pointee;
    if (!templateParam(t, 0, &pointee)) return std::nullopt;
    std::optional<std::uint64_t> target;
    std::string useCount;
    if (kind == "std::unique_ptr<") {
      view.kind = StlView::Kind::UniquePtr;
      target = pointerAt(v, v.location.address);  // the stored pointer leads the object
    } else {
      view.kind = StlView::Kind::SharedPtr;
      auto ptr = memberOf(v, "_M_ptr");
      auto pi = path(v, {"_M_refcount", "_M_pi"});
      if (!ptr || !pi) return std::nullopt;
      if (auto p = readPointer(*ptr)) target = *p;
      if (auto counted = readPointer(*pi); counted && *counted != 0) {
        std::int32_t uses = 0;
        if (v.frame->memory->read(*counted + 8, &uses, 4)) useCount = " (use_count=" + std::to_string(uses) + ")";
      }
    }
    if (!target) return std::nullopt;
    view.summary = *target == 0 ? "nullptr" : hexAddress(*target) + useCount;
    if (*target != 0) {
      view.payload = memoryValue(v.frame, "[value]", TypeRef::of(pointee), *target);
      view.named = 2;
    }
    return view;
  }
  if (kind == "std::optional<") {
    auto payload = memberOf(v, "_M_payload");
    if (!payload) return std::nullopt;
    auto engaged = memberOf(*payload, "_M_engaged");
    auto value = path(*payload, {"_M_payload", "_M_value"});
    if (!engaged || !value) return std::nullopt;
    auto on = readInteger(*engaged);
    if (!on) return std::nullopt;
    view.kind = StlView::Kind::Optional;
    if (*on) {
      value->name = "[value]";
      view.summary = present(*value).value;
      view.payload = *value;
      view.named = 2;
    } else {
      view.summary = "nullopt";
    }
    return view;
  }
  return std::nullopt;
}

Result<std::vector<Value>> stlChildren(const Value& v, const StlView& view, ChildFilter filter, std::uint64_t start,
                                       std::uint64_t count) {
  std::vector<Value> named;
  if (view.payload) named.push_back(*view.payload);
  named.push_back(rawOf(v));
  std::vector<Value> out;
  std::uint64_t end = start + count;
  std::uint64_t indexedStart = start, indexedEnd = end;
  if (filter != ChildFilter::Indexed) {
    for (std::uint64_t i = start; i < named.size() && i < end; ++i) out.push_back(named[i]);
    if (filter == ChildFilter::Named) return out;
    indexedStart = start > named.size() ? start - named.size() : 0;
    indexedEnd = end > named.size() ? end - named.size() : 0;
  }
  indexedEnd = std::min(indexedEnd, view.size);
  if (indexedStart >= indexedEnd) return out;
  switch (view.kind) {
    case StlView::Kind::Vector:
      for (std::uint64_t i = indexedStart; i < indexedEnd; ++i) {
        Value e = memoryValue(v.frame, "[" + std::to_string(i) + "]", TypeRef::of(view.elementType),
                              view.first + i * view.elementSize);
        if (!v.expression.empty()) e.expression = v.expression + "[" + std::to_string(i) + "]";
        out.push_back(std::move(e));
      }
      return out;
    case StlView::Kind::Map:
    case StlView::Kind::UnorderedMap: {
      // Nodes are walked from the first; paging deep into a huge map costs a walk to the page.
      std::optional<std::uint64_t> node = view.first;
      std::uint64_t storage = view.kind == StlView::Kind::Map ? 32 : 8;
      for (std::uint64_t i = 0; i < indexedEnd && node && *node != 0; ++i) {
        if (i >= indexedStart) {
          Value pair = memoryValue(v.frame, "", TypeRef::of(view.elementType), *node + storage);
          auto key = memberOf(pair, "first");
          auto value = memberOf(pair, "second");
          if (!key || !value) return Error{errors::kBadDebugInfo, "unexpected std::pair layout", true};
          value->name = "[" + present(*key).value + "]";
          value->expression.clear();
          out.push_back(std::move(*value));
        }
        node = view.kind == StlView::Kind::Map ? nextNode(v, *node) : pointerAt(v, *node);
      }
      return out;
    }
    default:
      return out;
  }
}

}  // namespace strata::native::symbols
