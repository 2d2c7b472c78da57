// Typed values: reading scalars and naming types (presenting them and paging their children:
// values_present.cpp).
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>

#include "internal.hpp"
#include "strata/native/symbols/values.hpp"
#include "value_internal.hpp"

namespace strata::native::symbols {

using detail::hexAddress;

bool typeOf(Dwarf_Die* die, Dwarf_Die* out) {
  Dwarf_Attribute attr;
  return dwarf_attr_integrate(die, DW_AT_type, &attr) != nullptr && dwarf_formref_die(&attr, out) != nullptr;
}

static Dwarf_Word udataAttr(Dwarf_Die* die, int name, Dwarf_Word fallback = 0) {
  Dwarf_Attribute attr;
  Dwarf_Word v = 0;
  if (dwarf_attr_integrate(die, name, &attr) == nullptr || dwarf_formudata(&attr, &v) != 0) return fallback;
  return v;
}

static int strippedTag(const TypeRef& t) {
  if (!t.hasDie) return 0;
  Dwarf_Die d = stripCvTypedefs(t.die);
  return dwarf_tag(&d);
}

bool isCharType(Dwarf_Die type) {
  Dwarf_Die d = stripCvTypedefs(type);
  if (dwarf_tag(&d) != DW_TAG_base_type) return false;
  Dwarf_Word enc = udataAttr(&d, DW_AT_encoding);
  return (enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char) && udataAttr(&d, DW_AT_byte_size) == 1;
}

std::optional<std::uint64_t> arrayCount(Dwarf_Die array) {
  Dwarf_Die child;
  if (dwarf_child(&array, &child) != 0) return std::nullopt;
  do {
    if (dwarf_tag(&child) != DW_TAG_subrange_type) continue;
    Dwarf_Attribute attr;
    Dwarf_Word v = 0;
    if (dwarf_attr(&child, DW_AT_count, &attr) != nullptr && dwarf_formudata(&attr, &v) == 0) return v;
    if (dwarf_attr(&child, DW_AT_upper_bound, &attr) != nullptr && dwarf_formudata(&attr, &v) == 0) return v + 1;
    return 0;  // flexible array member: no bound
  } while (dwarf_siblingof(&child, &child) == 0);
  return std::nullopt;
}

// Data members and base classes, in declaration order (static and artificial ones left out).
std::vector<Dwarf_Die> fieldsOf(Dwarf_Die type) {
  std::vector<Dwarf_Die> out;
  Dwarf_Die child;
  if (dwarf_child(&type, &child) != 0) return out;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_inheritance) {
      out.push_back(child);
    } else if (tag == DW_TAG_member) {
      if (dwarf_hasattr(&child, DW_AT_external) || dwarf_hasattr(&child, DW_AT_declaration)) continue;
      Dwarf_Attribute attr;
      bool artificial = false;
      if (dwarf_attr(&child, DW_AT_artificial, &attr) != nullptr) dwarf_formflag(&attr, &artificial);
      if (!artificial) out.push_back(child);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return out;
}

Value subValue(const Value& parent, std::string name, Dwarf_Die type, std::uint64_t byteOffset) {
  Value v;
  v.frame = parent.frame;
  v.name = std::move(name);
  v.type = TypeRef::of(type);
  v.location = parent.location;
  switch (parent.location.kind) {
    case ValueLocation::Kind::Memory:
      v.location.address += byteOffset;
      break;
    case ValueLocation::Kind::Literal:
    case ValueLocation::Kind::Register: {
      // Small aggregates in registers or assembled from pieces: slice the bytes.
      auto size = typeSize(v.type).value_or(0);
      auto all = readValueBytes(parent, typeSize(parent.type).value_or(8));
      v.location = ValueLocation{ValueLocation::Kind::Literal, 0, -1, {}};
      if (all) {
        v.location.bytes.assign(size, 0);
        for (std::size_t i = 0; i < size && byteOffset + i < all->size(); ++i) v.location.bytes[i] = (*all)[byteOffset + i];
      } else {
        v.location.kind = ValueLocation::Kind::OptimizedOut;
      }
      break;
    }
    case ValueLocation::Kind::OptimizedOut:
      break;
  }
  return v;
}

Value fieldValue(const Value& parent, Dwarf_Die field) {
  Dwarf_Die type{};
  typeOf(&field, &type);
  const char* n = dwarf_diename(&field);
  bool base = dwarf_tag(&field) == DW_TAG_inheritance;
  std::string name = base ? qualifiedTypeName(type) : (n != nullptr ? n : "<anonymous>");
  Dwarf_Word offset = udataAttr(&field, DW_AT_data_member_location);
  Dwarf_Attribute attr;
  std::uint16_t bitSize = 0, bitOffset = 0;
  if (dwarf_attr(&field, DW_AT_bit_size, &attr) != nullptr) {
    bitSize = static_cast<std::uint16_t>(udataAttr(&field, DW_AT_bit_size));
    if (dwarf_hasattr(&field, DW_AT_data_bit_offset)) {
      Dwarf_Word bits = udataAttr(&field, DW_AT_data_bit_offset);
      offset = bits / 8;
      bitOffset = static_cast<std::uint16_t>(bits % 8);
    } else {  // DWARF 2-4 counts from the storage unit's most significant bit
      Dwarf_Word unit = udataAttr(&field, DW_AT_byte_size, typeSize(TypeRef::of(type)).value_or(4));
      bitOffset = static_cast<std::uint16_t>(unit * 8 - udataAttr(&field, DW_AT_bit_offset) - bitSize);
    }
  }
  Value v = subValue(parent, name, type, offset);
  v.bitSize = bitSize;
  v.bitOffset = bitOffset;
  v.isBaseClass = base;
  if (!parent.expression.empty() && !base) v.expression = parent.expression + "." + name;
  else if (base) v.expression = parent.expression;
  return v;
}

std::string formatScalar(const Value& v) {
  Dwarf_Die t = stripCvTypedefs(v.type.die);
  int tag = dwarf_tag(&t);
  if (!v.type.hasDie) {
    switch (v.type.builtin) {
      case Builtin::Bool: { auto i = readInteger(v); return i ? (*i ? "true" : "false") : i.error().message; }
      case Builtin::Char: { auto i = readInteger(v); return i ? charLiteral(*i) : i.error().message; }
      case Builtin::Double: { auto d = readDouble(v); return d ? formatDouble(*d) : d.error().message; }
      case Builtin::ULong: { auto i = readInteger(v); return i ? std::to_string(static_cast<std::uint64_t>(*i)) : i.error().message; }
      default: { auto i = readInteger(v); return i ? std::to_string(*i) : i.error().message; }
    }
  }
  if (tag == DW_TAG_enumeration_type) {
    auto i = readInteger(v);
    if (!i) return i.error().message;
    Dwarf_Die e;
    if (dwarf_child(&t, &e) == 0) {
      do {
        Dwarf_Attribute attr;
        Dwarf_Sword s = 0;
        if (dwarf_tag(&e) == DW_TAG_enumerator && dwarf_attr(&e, DW_AT_const_value, &attr) != nullptr &&
            dwarf_formsdata(&attr, &s) == 0 && s == *i)
          return dwarf_diename(&e);
      } while (dwarf_siblingof(&e, &e) == 0);
    }
    return std::to_string(*i);
  }
  Dwarf_Word enc = udataAttr(&t, DW_AT_encoding);
  if (enc == DW_ATE_float) {
    auto d = readDouble(v);
    return d ? formatDouble(*d) : d.error().message;
  }
  auto i = readInteger(v);
  if (!i) return i.error().message;
  if (enc == DW_ATE_boolean) return *i ? "true" : "false";
  if (isCharType(t)) return charLiteral(*i);
  if (enc == DW_ATE_unsigned || enc == DW_ATE_unsigned_char || enc == DW_ATE_UTF)
    return std::to_string(static_cast<std::uint64_t>(*i) &
                          (typeSize(v.type).value_or(8) >= 8 ? ~0ULL : ((1ULL << (8 * typeSize(v.type).value_or(8))) - 1)));
  return std::to_string(*i);
}

Result<std::string> readCString(const Value& pointerValue, std::size_t limit, bool* truncated) {
  auto address = readPointer(pointerValue);
  if (!address) return address.takeError();
  std::string out;
  *truncated = false;
  char chunk[64];
  std::uint64_t at = *address;
  while (out.size() < limit) {
    // Read in small chunks so a string near the end of a mapping still reads.
    std::size_t n = sizeof chunk - (at % sizeof chunk);
    if (auto r = pointerValue.frame->memory->read(at, chunk, n); !r) {
      if (out.empty() && at == *address) return r.takeError();
      break;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (chunk[i] == 0) return out;
      out += chunk[i];
    }
    at += n;
  }
  *truncated = true;
  return out;
}

Dwarf_Die stripCvTypedefs(Dwarf_Die type) {
  for (int guard = 0; guard < 64; ++guard) {
    int tag = dwarf_tag(&type);
    if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
        tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type)
      break;
    Dwarf_Die next;
    if (!typeOf(&type, &next)) break;  // "const void"
    type = next;
  }
  return type;
}

std::string typeName(const TypeRef& t) {
  if (!t.hasDie) {
    switch (t.builtin) {
      case Builtin::Bool: return "bool";
      case Builtin::Char: return "char";
      case Builtin::Int: return "int";
      case Builtin::Long: return "long";
      case Builtin::ULong: return "unsigned long";
      case Builtin::Double: return "double";
      case Builtin::CharPointer: return "const char *";
      case Builtin::Address: return "void *";
      case Builtin::None: return "void";
    }
  }
  Dwarf_Die d = t.die;
  Dwarf_Die inner;
  bool hasInner = typeOf(&d, &inner);
  switch (dwarf_tag(&d)) {
    case DW_TAG_pointer_type: {
      if (!hasInner) return "void *";
      std::string in = typeName(TypeRef::of(inner));
      return in.ends_with("*") ? in + "*" : in + " *";
    }
    case DW_TAG_reference_type: return (hasInner ? typeName(TypeRef::of(inner)) : "void") + " &";
    case DW_TAG_rvalue_reference_type: return (hasInner ? typeName(TypeRef::of(inner)) : "void") + " &&";
    case DW_TAG_const_type:
    case DW_TAG_volatile_type: {
      // Collect the whole cv chain so the name reads "const volatile T" in either DWARF order.
      bool isConst = false, isVolatile = false;
      Dwarf_Die cur = d;
      bool more = true;
      while (more && (dwarf_tag(&cur) == DW_TAG_const_type || dwarf_tag(&cur) == DW_TAG_volatile_type)) {
        (dwarf_tag(&cur) == DW_TAG_const_type ? isConst : isVolatile) = true;
        more = typeOf(&cur, &cur);
      }
      std::string q = std::string(isConst ? "const" : "") + (isConst && isVolatile ? " " : "") + (isVolatile ? "volatile" : "");
      if (!more) return q + " void";
      std::string in = typeName(TypeRef::of(cur));
      return dwarf_tag(&cur) == DW_TAG_pointer_type ? in + " " + q : q + " " + in;
    }
    case DW_TAG_array_type: {
      std::string elem = hasInner ? typeName(TypeRef::of(inner)) : "?";
      auto n = arrayCount(d);
      return elem + " [" + (n ? std::to_string(*n) : "") + "]";
    }
    case DW_TAG_subroutine_type: return "function";
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_enumeration_type: {
      Dwarf_Die cu;
      bool c = dwarf_diecu(&d, &cu, nullptr, nullptr) != nullptr &&
               (dwarf_srclang(&cu) == DW_LANG_C99 || dwarf_srclang(&cu) == DW_LANG_C89 ||
                dwarf_srclang(&cu) == DW_LANG_C11 || dwarf_srclang(&cu) == DW_LANG_C);
      const char* kw = dwarf_tag(&d) == DW_TAG_structure_type ? "struct " : dwarf_tag(&d) == DW_TAG_union_type ? "union " : "enum ";
      return (c ? kw : "") + qualifiedTypeName(d);
    }
    default: return qualifiedTypeName(d);
  }
}

std::optional<std::uint64_t> typeSize(const TypeRef& t) {
  if (!t.hasDie) {
    switch (t.builtin) {
      case Builtin::Bool: case Builtin::Char: return 1;
      case Builtin::Int: return 4;
      case Builtin::None: return std::nullopt;
      default: return 8;
    }
  }
  Dwarf_Die d = stripCvTypedefs(t.die);
  int tag = dwarf_tag(&d);
  if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type ||
      tag == DW_TAG_ptr_to_member_type)
    return udataAttr(&d, DW_AT_byte_size, 8);
  Dwarf_Word size = 0;
  if (dwarf_aggregate_size(&d, &size) != 0) return std::nullopt;
  return size;
}

Result<std::vector<std::uint8_t>> readValueBytes(const Value& v, std::size_t size) {
  std::vector<std::uint8_t> out(size, 0);
  switch (v.location.kind) {
    case ValueLocation::Kind::Memory:
      if (auto r = v.frame->memory->read(v.location.address, out.data(), size); !r)
        return Error{errors::kMemoryUnreadable, "cannot read memory at " + hexAddress(v.location.address) + ": " + r.error().message, true};
      return out;
    case ValueLocation::Kind::Register:
      if (!v.frame->registers.has(v.location.reg)) return Error{errors::kOptimizedOut, "<optimized out>", true};
      std::memcpy(out.data(), &v.frame->registers.value[v.location.reg], std::min<std::size_t>(size, 8));
      return out;
    case ValueLocation::Kind::Literal:
      std::memcpy(out.data(), v.location.bytes.data(), std::min(size, v.location.bytes.size()));
      return out;
    case ValueLocation::Kind::OptimizedOut:
      break;
  }
  return Error{errors::kOptimizedOut, "<optimized out>", true};
}

bool isFloating(const TypeRef& t) {
  if (!t.hasDie) return t.builtin == Builtin::Double;
  Dwarf_Die d = stripCvTypedefs(t.die);
  return dwarf_tag(&d) == DW_TAG_base_type && udataAttr(&d, DW_AT_encoding) == DW_ATE_float;
}

bool isSigned(const TypeRef& t) {
  if (!t.hasDie) return t.builtin == Builtin::Int || t.builtin == Builtin::Long || t.builtin == Builtin::Char;
  Dwarf_Die d = stripCvTypedefs(t.die);
  if (dwarf_tag(&d) == DW_TAG_enumeration_type) {
    Dwarf_Die under;
    return typeOf(&d, &under) ? isSigned(TypeRef::of(under)) : true;
  }
  if (dwarf_tag(&d) != DW_TAG_base_type) return false;
  Dwarf_Word enc = udataAttr(&d, DW_AT_encoding);
  return enc == DW_ATE_signed || enc == DW_ATE_signed_char || enc == DW_ATE_float;
}

bool isPointerLike(const TypeRef& t) {
  if (!t.hasDie) return t.builtin == Builtin::CharPointer || t.builtin == Builtin::Address;
  int tag = strippedTag(t);
  return tag == DW_TAG_pointer_type || tag == DW_TAG_array_type;
}

bool isScalar(const TypeRef& t) {
  if (!t.hasDie) return t.builtin != Builtin::None;
  int tag = strippedTag(t);
  return tag == DW_TAG_base_type || tag == DW_TAG_enumeration_type || tag == DW_TAG_pointer_type;
}

bool pointeeType(const TypeRef& t, Dwarf_Die* out) {
  if (!t.hasDie) return false;
  Dwarf_Die d = stripCvTypedefs(t.die);
  return typeOf(&d, out);
}

Result<std::uint64_t> readPointer(const Value& v) {
  auto bytes = readValueBytes(v, 8);
  if (!bytes) return bytes.takeError();
  std::uint64_t p = 0;
  std::memcpy(&p, bytes->data(), 8);
  return p;
}

Result<std::int64_t> readInteger(const Value& v) {
  if (isFloating(v.type)) {
    auto d = readDouble(v);
    if (!d) return d.takeError();
    return static_cast<std::int64_t>(*d);
  }
  std::size_t size = std::min<std::uint64_t>(typeSize(v.type).value_or(8), 8);
  if (v.bitSize != 0) size = (v.bitOffset + v.bitSize + 7) / 8;
  auto bytes = readValueBytes(v, size);
  if (!bytes) return bytes.takeError();
  std::uint64_t raw = 0;
  std::memcpy(&raw, bytes->data(), std::min<std::size_t>(size, 8));
  unsigned bits = static_cast<unsigned>(size * 8);
  if (v.bitSize != 0) {
    raw >>= v.bitOffset;
    bits = v.bitSize;
  }
  if (bits < 64) {
    raw &= (1ULL << bits) - 1;
    if (isSigned(v.type) && (raw >> (bits - 1)) & 1) raw |= ~((1ULL << bits) - 1);
  }
  return static_cast<std::int64_t>(raw);
}

Result<double> readDouble(const Value& v) {
  if (!isFloating(v.type)) {
    auto i = readInteger(v);
    if (!i) return i.takeError();
    return isSigned(v.type) ? static_cast<double>(*i) : static_cast<double>(static_cast<std::uint64_t>(*i));
  }
  std::size_t size = typeSize(v.type).value_or(8);
  auto bytes = readValueBytes(v, size);
  if (!bytes) return bytes.takeError();
  if (size == 4) {
    float f;
    std::memcpy(&f, bytes->data(), 4);
    return f;
  }
  if (size == 8) {
    double d;
    std::memcpy(&d, bytes->data(), 8);
    return d;
  }
  long double ld = 0;
  std::memcpy(&ld, bytes->data(), std::min(size, sizeof ld));
  return static_cast<double>(ld);
}

Value memoryValue(std::shared_ptr<const FrameContext> frame, std::string name, TypeRef type, std::uint64_t address) {
  Value v;
  v.frame = std::move(frame);
  v.name = std::move(name);
  v.type = type;
  v.location = ValueLocation{ValueLocation::Kind::Memory, address, -1, {}};
  return v;
}

Value literalValue(std::shared_ptr<const FrameContext> frame, TypeRef type, const void* bytes, std::size_t size) {
  Value v;
  v.frame = std::move(frame);
  v.type = type;
  const auto* p = static_cast<const std::uint8_t*>(bytes);
  v.location = ValueLocation{ValueLocation::Kind::Literal, 0, -1, {p, p + size}};
  return v;
}

std::optional<Value> memberOf(const Value& object, std::string_view member) {
  if (!object.type.hasDie) return std::nullopt;
  Dwarf_Die t = stripCvTypedefs(object.type.die);
  int tag = dwarf_tag(&t);
  if (tag != DW_TAG_structure_type && tag != DW_TAG_class_type && tag != DW_TAG_union_type) return std::nullopt;
  for (Dwarf_Die& f : fieldsOf(t)) {
    const char* n = dwarf_diename(&f);
    bool base = dwarf_tag(&f) == DW_TAG_inheritance;
    if (!base && n != nullptr && member == n) return fieldValue(object, f);
    if (base || n == nullptr) {  // search base classes and anonymous structs/unions
      if (auto m = memberOf(fieldValue(object, f), member)) return m;
    }
  }
  return std::nullopt;
}

Value rawOf(const Value& v) {
  Value r = v;
  r.name = "[raw]";
  r.raw = true;
  return r;
}

}  // namespace strata::native::symbols
