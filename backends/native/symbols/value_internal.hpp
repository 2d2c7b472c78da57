// Pieces shared inside the value model: variable locations and the libstdc++ views.
#pragma once

#include <optional>
#include <string>

#include "strata/native/symbols/values.hpp"

namespace strata::native::symbols {

// DW_AT_location or DW_AT_const_value of a variable at the frame's pc.
Result<ValueLocation> locationOf(const FrameContext& frame, Dwarf_Die* variable);

// A libstdc++ container or smart pointer shown as a user thinks of it.
struct StlView {
  enum class Kind { String, Vector, Map, UnorderedMap, UniquePtr, SharedPtr, Optional };
  Kind kind = Kind::Vector;
  std::string summary;
  std::uint64_t size = 0;      // indexed children
  std::uint64_t named = 1;     // [raw], plus [value] for pointers and optionals
  std::uint64_t first = 0;     // vector: address of element 0; map/unordered_map: first node
  std::uint64_t elementSize = 0;
  Dwarf_Die elementType{};     // vector element, map pair, pointee, optional payload
  bool hasElementType = false;
  std::optional<Value> payload;  // unique_ptr/shared_ptr target, engaged optional's value
};
std::optional<StlView> stlView(const Value& value);
Result<std::vector<Value>> stlChildren(const Value& value, const StlView& view, ChildFilter filter,
                                       std::uint64_t start, std::uint64_t count);
// The fully qualified name of a type DIE ("shapes::Rect", "std::vector<int, ...>"); cached.
std::string qualifiedTypeName(Dwarf_Die die);
Value rawOf(const Value& value);
std::string simplifyTypeName(std::string name);
std::string quote(const std::string& s, bool truncated);
std::string formatDouble(double d);
std::string charLiteral(std::int64_t v);
// The pieces of values.cpp that presenting a value (values_present.cpp) uses too.
bool typeOf(Dwarf_Die* die, Dwarf_Die* out);
bool isCharType(Dwarf_Die type);
std::optional<std::uint64_t> arrayCount(Dwarf_Die array);
std::vector<Dwarf_Die> fieldsOf(Dwarf_Die type);
Value subValue(const Value& parent, std::string name, Dwarf_Die type, std::uint64_t byteOffset);
Value fieldValue(const Value& parent, Dwarf_Die field);
std::string formatScalar(const Value& v);
Result<std::string> readCString(const Value& pointerValue, std::size_t limit, bool* truncated);

}  // namespace strata::native::symbols
