// The expression tree shared by the parser and the evaluator.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "strata/native/symbols/values.hpp"

namespace strata::native::symbols::expr {

enum class Kind { Int, Float, Char, String, Bool, Name, Member, Arrow, Index, Unary, Binary, Cast };

struct CastSpec {
  std::string name;  // as written: "unsigned int"
  int bytes = 4;
  bool isSigned = true;
  bool isFloat = false;
  bool isBool = false;
};

struct Node {
  Kind kind = Kind::Int;
  std::string text;  // the name, the member, or the operator
  std::int64_t integer = 0;
  double real = 0;
  Builtin literalType = Builtin::Int;
  CastSpec cast;
  std::shared_ptr<Node> a, b;
  // Name resolution remembered per (file, pc): the same breakpoint hit resolves once.
  mutable const ObjectSymbols* cachedFile = nullptr;
  mutable std::uint64_t cachedPc = 0;
  mutable ResolvedName cached;
};

Result<std::shared_ptr<Node>> parse(std::string_view text);

}  // namespace strata::native::symbols::expr
