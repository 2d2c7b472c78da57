// Typed values as the user sees them: a value's text, and its children a page at a time.
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>

#include "internal.hpp"
#include "strata/native/symbols/values.hpp"
#include "value_internal.hpp"

namespace strata::native::symbols {

using detail::hexAddress;

Presentation present(const Value& v) {
  Presentation p;
  p.type = simplifyTypeName(typeName(v.type));
  if (v.location.kind == ValueLocation::Kind::Memory) p.memoryReference = v.location.address;
  if (v.location.kind == ValueLocation::Kind::OptimizedOut) {
    p.value = "<optimized out>";
    return p;
  }
  if (!v.type.hasDie) {
    if (v.type.builtin == Builtin::Address) {
      auto a = readPointer(v);
      p.value = a ? hexAddress(*a) : a.error().message;
    } else if (v.type.builtin == Builtin::CharPointer) {
      std::string s(v.location.bytes.begin(), v.location.bytes.end());
      p.value = quote(s, false);
    } else {
      p.value = formatScalar(v);
    }
    return p;
  }
  if (!v.raw) {
    if (auto view = stlView(v)) {
      p.value = view->summary;
      p.indexedChildren = view->size;
      p.namedChildren = view->named;
      return p;
    }
  }
  Dwarf_Die t = stripCvTypedefs(v.type.die);
  switch (dwarf_tag(&t)) {
    case DW_TAG_base_type:
    case DW_TAG_enumeration_type:
      p.value = formatScalar(v);
      return p;
    case DW_TAG_pointer_type: {
      auto address = readPointer(v);
      if (!address) {
        p.value = address.error().message;
        return p;
      }
      p.value = hexAddress(*address);
      Dwarf_Die pointee;
      if (*address == 0 || !typeOf(&t, &pointee)) return p;
      if (isCharType(pointee)) {
        bool truncated = false;
        auto s = readCString(v, 512, &truncated);
        p.value += " " + (s ? quote(*s, truncated) : "<" + s.error().message + ">");
        return p;
      }
      Dwarf_Die target = stripCvTypedefs(pointee);
      int tt = dwarf_tag(&target);
      if (tt == DW_TAG_subroutine_type) {
        if (v.frame->symbols)
          if (auto fn = v.frame->symbols->functionAt(*address - v.frame->loadBias)) p.value += " <" + fn->name + ">";
        return p;
      }
      if (tt == DW_TAG_structure_type || tt == DW_TAG_class_type || tt == DW_TAG_union_type) {
        // Counts only: presenting the target would recurse through linked structures.
        Value target = memoryValue(v.frame, "", TypeRef::of(pointee), *address);
        if (auto view = stlView(target)) {
          p.namedChildren = view->named;
          p.indexedChildren = view->size;
        } else {
          p.namedChildren = fieldsOf(stripCvTypedefs(pointee)).size();
        }
      } else {
        p.namedChildren = 1;
      }
      return p;
    }
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type: {
      auto address = readPointer(v);
      Dwarf_Die referent;
      if (!address || !typeOf(&t, &referent)) {
        p.value = address ? "<unknown type>" : address.error().message;
        return p;
      }
      Presentation inner = present(memoryValue(v.frame, v.name, TypeRef::of(referent), *address));
      inner.type = p.type;
      return inner;
    }
    case DW_TAG_array_type: {
      Dwarf_Die elem;
      auto count = arrayCount(t).value_or(0);
      p.indexedChildren = count;
      if (!typeOf(&t, &elem)) return p;
      if (isCharType(elem) && v.location.kind == ValueLocation::Kind::Memory) {
        auto bytes = readValueBytes(v, std::min<std::uint64_t>(count, 4096));
        if (bytes) {
          std::string s(bytes->begin(), bytes->end());
          // A C string ends at its NUL when only padding follows; raw bytes show in full.
          std::size_t nul = s.find('\0');
          bool padded = nul != std::string::npos && s.find_first_not_of('\0', nul) == std::string::npos;
          if (padded) s.resize(nul);
          p.value = quote(s, !padded && count > 4096);
          return p;
        }
      }
      std::string summary = "{";
      std::uint64_t elemSize = typeSize(TypeRef::of(elem)).value_or(0);
      for (std::uint64_t i = 0; i < std::min<std::uint64_t>(count, 10); ++i) {
        Value e = subValue(v, "", elem, i * elemSize);
        summary += (i ? ", " : "") + (isScalar(e.type) ? present(e).value : std::string("{...}"));
      }
      p.value = summary + (count > 10 ? ", ...}" : "}");
      return p;
    }
    case DW_TAG_structure_type:
    case DW_TAG_class_type:
    case DW_TAG_union_type: {
      auto fields = fieldsOf(t);
      p.namedChildren = fields.size();
      std::string summary = "{";
      std::size_t shown = 0;
      for (Dwarf_Die& f : fields) {
        Value m = fieldValue(v, f);
        if (shown == 4) {
          summary += ", ...";
          break;
        }
        summary += (shown++ ? ", " : "") + m.name + "=" + (isScalar(m.type) ? present(m).value : std::string("{...}"));
      }
      p.value = summary + "}";
      return p;
    }
    case DW_TAG_subroutine_type:
      p.value = "function";
      return p;
    default:
      p.value = "<unsupported type>";
      return p;
  }
}

Result<std::vector<Value>> children(const Value& v, ChildFilter filter, std::uint64_t start, std::uint64_t count) {
  std::vector<Value> out;
  if (v.location.kind == ValueLocation::Kind::OptimizedOut || !v.type.hasDie) return out;
  if (!v.raw) {
    if (auto view = stlView(v)) return stlChildren(v, *view, filter, start, count);
  }
  Dwarf_Die t = stripCvTypedefs(v.type.die);
  int tag = dwarf_tag(&t);
  if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type) {
    auto address = readPointer(v);
    if (!address) return address.takeError();
    Dwarf_Die pointee;
    if (*address == 0 || !typeOf(&t, &pointee)) return out;
    Value target = memoryValue(v.frame, "*" + v.name, TypeRef::of(pointee), *address);
    target.expression = v.expression.empty() ? "" : "*" + v.expression;
    Dwarf_Die st = stripCvTypedefs(pointee);
    int pt = dwarf_tag(&st);
    if (tag != DW_TAG_pointer_type || pt == DW_TAG_structure_type || pt == DW_TAG_class_type || pt == DW_TAG_union_type) {
      auto kids = children(target, filter, start, count);
      if (kids && tag == DW_TAG_pointer_type && !v.expression.empty())
        for (Value& k : *kids)
          if (!k.isBaseClass) k.expression = v.expression + "->" + k.name;
      return kids;
    }
    if (filter != ChildFilter::Indexed && start == 0 && count > 0) out.push_back(target);
    return out;
  }
  if (tag == DW_TAG_array_type) {
    if (filter == ChildFilter::Named) return out;
    Dwarf_Die elem;
    if (!typeOf(&t, &elem)) return out;
    std::uint64_t n = arrayCount(t).value_or(0);
    std::uint64_t elemSize = typeSize(TypeRef::of(elem)).value_or(0);
    for (std::uint64_t i = start; i < n && i < start + count; ++i) {
      Value e = subValue(v, "[" + std::to_string(i) + "]", elem, i * elemSize);
      if (!v.expression.empty()) e.expression = v.expression + "[" + std::to_string(i) + "]";
      out.push_back(std::move(e));
    }
    return out;
  }
  if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type) {
    if (filter == ChildFilter::Indexed) return out;
    auto fields = fieldsOf(t);
    for (std::uint64_t i = start; i < fields.size() && i < start + count; ++i) out.push_back(fieldValue(v, fields[i]));
  }
  return out;
}

}  // namespace strata::native::symbols
