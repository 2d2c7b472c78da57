// Expression evaluation against a stopped frame: C arithmetic rules, lvalues, pretty-view access.
#include <cmath>
#include <cstring>

#include "expression_ast.hpp"
#include "internal.hpp"
#include "strata/native/symbols/memory_cache.hpp"
#include "strata/native/symbols/expression.hpp"
#include "value_internal.hpp"

namespace strata::native::symbols {

using expr::Kind;
using expr::Node;

namespace {

using FramePtr = std::shared_ptr<const FrameContext>;

Value makeInteger(const FramePtr& f, std::int64_t v, Builtin type) {
  std::size_t size = type == Builtin::Int ? 4 : (type == Builtin::Bool || type == Builtin::Char) ? 1 : 8;
  return literalValue(f, TypeRef::of(type), &v, size);
}

Value makeDouble(const FramePtr& f, double d) { return literalValue(f, TypeRef::of(Builtin::Double), &d, 8); }

int tagOf(const Value& v) {
  if (!v.type.hasDie) return 0;
  Dwarf_Die d = stripCvTypedefs(v.type.die);
  return dwarf_tag(&d);
}

// References behave as the object they refer to.
Result<Value> decay(Value v) {
  int tag = tagOf(v);
  if (tag != DW_TAG_reference_type && tag != DW_TAG_rvalue_reference_type) return v;
  auto address = readPointer(v);
  if (!address) return address.takeError();
  Dwarf_Die referent;
  if (!pointeeType(v.type, &referent)) return Error{errors::kBadDebugInfo, "reference to an unknown type", true};
  Value r = memoryValue(v.frame, v.name, TypeRef::of(referent), *address);
  r.expression = v.expression;
  return r;
}

struct Number {
  bool isFloat = false;
  bool isUnsigned = false;
  int bytes = 4;
  std::int64_t i = 0;
  double d = 0;
};

Result<Number> numberOf(const Value& v, const std::string& op) {
  if (!isScalar(v.type)) return Error{errors::kBadOperation, "cannot apply '" + op + "' to " + typeName(v.type), true};
  Number n;
  n.bytes = static_cast<int>(typeSize(v.type).value_or(8));
  if (isFloating(v.type)) {
    auto d = readDouble(v);
    if (!d) return d.takeError();
    n.isFloat = true;
    n.d = *d;
    return n;
  }
  auto i = readInteger(v);
  if (!i) return i.takeError();
  n.i = *i;
  n.isUnsigned = !isSigned(v.type) || isPointerLike(v.type);
  return n;
}

Builtin integerResult(const Number& a, const Number& b) {
  if ((a.isUnsigned && a.bytes >= 8) || (b.isUnsigned && b.bytes >= 8)) return Builtin::ULong;
  if (a.bytes >= 8 || b.bytes >= 8) return Builtin::Long;
  return Builtin::Int;
}

// Text of a char*, char array or std::string, for comparisons with a string literal.
std::optional<std::string> stringOf(const Value& v) {
  if (!v.type.hasDie) return std::nullopt;
  if (auto view = stlView(v); view && view->kind == StlView::Kind::String) {
    auto p = memberOf(v, "_M_dataplus");
    auto len = memberOf(v, "_M_string_length");
    if (!p || !len) return std::nullopt;
    auto ptr = memberOf(*p, "_M_p");
    auto a = ptr ? readPointer(*ptr) : Result<std::uint64_t>(Error{errors::kBadDebugInfo, "a std::string without _M_p", false});
    auto n = readInteger(*len);
    if (!a || !n) return std::nullopt;
    std::string s(static_cast<std::size_t>(*n), '\0');
    if (*n && !v.frame->memory->read(*a, s.data(), s.size())) return std::nullopt;
    return s;
  }
  Dwarf_Die t = stripCvTypedefs(v.type.die);
  Dwarf_Die elem;
  if (!pointeeType(v.type, &elem) || typeSize(TypeRef::of(elem)).value_or(0) != 1) return std::nullopt;
  std::uint64_t address = 0;
  if (dwarf_tag(&t) == DW_TAG_pointer_type) {
    auto a = readPointer(v);
    if (!a) return std::nullopt;
    address = *a;
  } else if (dwarf_tag(&t) == DW_TAG_array_type && v.location.kind == ValueLocation::Kind::Memory) {
    address = v.location.address;
  } else {
    return std::nullopt;
  }
  std::string s;
  char c = 0;
  while (s.size() < 4096 && v.frame->memory->read(address + s.size(), &c, 1) && c != 0) s += c;
  return s;
}

class Evaluator {
 public:
  explicit Evaluator(FramePtr frame) : f_(std::move(frame)) {}

  Result<Value> eval(const Node& n) {
    switch (n.kind) {
      case Kind::Int: return makeInteger(f_, n.integer, n.literalType);
      case Kind::Bool: return makeInteger(f_, n.integer, Builtin::Bool);
      case Kind::Char: return makeInteger(f_, n.integer, Builtin::Char);
      case Kind::Float: return makeDouble(f_, n.real);
      case Kind::String: return literalValue(f_, TypeRef::of(Builtin::CharPointer), n.text.data(), n.text.size());
      case Kind::Name: return name(n);
      case Kind::Member:
      case Kind::Arrow: return member(n);
      case Kind::Index: return index(n);
      case Kind::Unary: return unary(n);
      case Kind::Binary: return binary(n);
      case Kind::Cast: return cast(n);
    }
    return Error{errors::kBadExpression, "unsupported expression", true};
  }

 private:
  Result<Value> name(const Node& n) {
    if (!f_->symbols) return Error{errors::kUnknownName, "no symbol '" + n.text + "' in the current scope", true};
    if (n.cachedFile != f_->symbols.get() || n.cachedPc != f_->pc) {
      auto r = resolveVariable(f_, n.text);
      if (!r) return r.takeError();
      n.cached = *r;
      n.cachedFile = f_->symbols.get();
      n.cachedPc = f_->pc;
    }
    return valueOf(f_, n.cached, n.text);
  }

  Result<Value> operand(const Node& n) {
    auto v = eval(n);
    if (!v) return v;
    if (v->location.kind == ValueLocation::Kind::OptimizedOut)
      return Error{errors::kOptimizedOut, "'" + (v->expression.empty() ? v->name : v->expression) + "' is optimized out", true};
    return decay(std::move(*v));
  }

  Result<Value> member(const Node& n) {
    auto object = operand(*n.a);
    if (!object) return object;
    bool arrow = n.kind == Kind::Arrow;
    int tag = tagOf(*object);
    std::string op = arrow ? "->" : ".";
    if (arrow) {
      if (auto view = stlView(*object); view && view->payload &&
          (view->kind == StlView::Kind::UniquePtr || view->kind == StlView::Kind::SharedPtr)) {
        object = *view->payload;
      } else if (tag == DW_TAG_pointer_type) {
        auto deref = dereference(*object);
        if (!deref) return deref;
        object = std::move(*deref);
      } else {
        return Error{errors::kBadOperation, "cannot apply '->' to " + typeName(object->type), true};
      }
    } else if (tag == DW_TAG_pointer_type) {
      return Error{errors::kBadOperation, "cannot apply '.' to " + typeName(object->type) + " (use '->')", true};
    }
    int t = tagOf(*object);
    if (t != DW_TAG_structure_type && t != DW_TAG_class_type && t != DW_TAG_union_type)
      return Error{errors::kBadOperation, "cannot apply '" + op + "' to " + typeName(object->type), true};
    auto m = memberOf(*object, n.text);
    if (!m) return Error{errors::kNoSuchMember, "no member '" + n.text + "' in " + typeName(object->type), true};
    return *m;
  }

  Result<Value> dereference(const Value& v) {
    int tag = tagOf(v);
    Dwarf_Die pointee;
    if (tag == DW_TAG_pointer_type) {
      if (!pointeeType(v.type, &pointee)) return Error{errors::kBadOperation, "cannot dereference a void pointer", true};
      auto address = readPointer(v);
      if (!address) return address.takeError();
      if (*address == 0) return Error{errors::kNullPointer, "null pointer dereference", true};
      return memoryValue(f_, "*" + v.name, TypeRef::of(pointee), *address);
    }
    if (tag == DW_TAG_array_type) return element(v, 0);
    if (auto view = stlView(v); view && view->payload &&
        (view->kind == StlView::Kind::UniquePtr || view->kind == StlView::Kind::SharedPtr))
      return *view->payload;
    return Error{errors::kBadOperation, "cannot apply '*' to " + typeName(v.type), true};
  }

  Result<Value> element(const Value& base, std::int64_t i) {
    if (auto view = stlView(base); view && view->kind == StlView::Kind::Vector) {
      if (i < 0 || static_cast<std::uint64_t>(i) >= view->size)
        return Error{errors::kIndexOutOfRange, "index " + std::to_string(i) + " is out of range (size " + std::to_string(view->size) + ")", true};
      return memoryValue(f_, "[" + std::to_string(i) + "]", TypeRef::of(view->elementType), view->first + i * view->elementSize);
    }
    int tag = tagOf(base);
    Dwarf_Die elem;
    if ((tag != DW_TAG_pointer_type && tag != DW_TAG_array_type) || !pointeeType(base.type, &elem))
      return Error{errors::kBadOperation, "cannot index " + typeName(base.type), true};
    std::uint64_t size = typeSize(TypeRef::of(elem)).value_or(0);
    std::uint64_t address = 0;
    if (tag == DW_TAG_pointer_type) {
      auto a = readPointer(base);
      if (!a) return a.takeError();
      address = *a;
    } else if (base.location.kind == ValueLocation::Kind::Memory) {
      address = base.location.address;
    } else {
      return Error{errors::kBadOperation, "cannot index an array that is not in memory", true};
    }
    return memoryValue(f_, "[" + std::to_string(i) + "]", TypeRef::of(elem), address + i * size);
  }

  Result<Value> index(const Node& n) {
    auto base = operand(*n.a);
    if (!base) return base;
    auto idx = operand(*n.b);
    if (!idx) return idx;
    if (auto view = stlView(*base); view && (view->kind == StlView::Kind::Map || view->kind == StlView::Kind::UnorderedMap)) {
      // m[key]: keys are matched by how they present ("one" matches a std::string key "one").
      std::string wanted = "[" + present(*idx).value + "]";
      auto entries = stlChildren(*base, *view, ChildFilter::Indexed, 0, view->size);
      if (!entries) return entries.takeError();
      for (Value& e : *entries)
        if (e.name == wanted) return e;
      return Error{errors::kIndexOutOfRange, "no key " + present(*idx).value + " in " + simplifyTypeName(typeName(base->type)), true};
    }
    auto i = numberOf(*idx, "[]");
    if (!i || i->isFloat) return Error{errors::kBadOperation, "an index must be an integer", true};
    return element(*base, i->i);
  }

  Result<Value> unary(const Node& n) {
    if (n.text == "&") {
      auto v = eval(*n.a);
      if (!v) return v;
      if (v->location.kind != ValueLocation::Kind::Memory || v->bitSize != 0)
        return Error{errors::kBadOperation, "cannot take the address of a value that is not in memory", true};
      return makeInteger(f_, static_cast<std::int64_t>(v->location.address), Builtin::Address);
    }
    auto v = operand(*n.a);
    if (!v) return v;
    if (n.text == "*") return dereference(*v);
    auto num = numberOf(*v, n.text);
    if (!num) return num.takeError();
    if (n.text == "!") return makeInteger(f_, num->isFloat ? num->d == 0 : num->i == 0, Builtin::Bool);
    if (n.text == "-") {
      if (num->isFloat) return makeDouble(f_, -num->d);
      return makeInteger(f_, -num->i, num->bytes >= 8 ? (num->isUnsigned ? Builtin::ULong : Builtin::Long) : Builtin::Int);
    }
    if (num->isFloat) return Error{errors::kBadOperation, "cannot apply '~' to " + typeName(v->type), true};
    return makeInteger(f_, ~num->i, num->bytes >= 8 ? (num->isUnsigned ? Builtin::ULong : Builtin::Long) : Builtin::Int);
  }

  Result<Value> binary(const Node& n) {
    const std::string& op = n.text;
    if (op == "&&" || op == "||") {
      auto left = truth(*n.a);
      if (!left) return left.takeError();
      if (op == "&&" ? !*left : *left) return makeInteger(f_, *left, Builtin::Bool);
      auto right = truth(*n.b);
      if (!right) return right.takeError();
      return makeInteger(f_, *right, Builtin::Bool);
    }
    auto a = operand(*n.a);
    if (!a) return a;
    auto b = operand(*n.b);
    if (!b) return b;
    if ((op == "==" || op == "!=") && (n.a->kind == Kind::String || n.b->kind == Kind::String)) {
      const Node& other = n.a->kind == Kind::String ? *n.b : *n.a;
      const std::string& literal = n.a->kind == Kind::String ? n.a->text : n.b->text;
      auto s = stringOf(n.a->kind == Kind::String ? *b : *a);
      if (!s) return Error{errors::kBadOperation, "cannot compare " + typeName((other.kind == Kind::String ? *a : *b).type) + " with a string", true};
      return makeInteger(f_, (*s == literal) == (op == "=="), Builtin::Bool);
    }
    // Pointer arithmetic: p + n, p - n, p - q.
    int ta = tagOf(*a);
    if ((op == "+" || op == "-") && ta == DW_TAG_pointer_type && isScalar(b->type) && tagOf(*b) != DW_TAG_pointer_type) {
      Dwarf_Die elem;
      std::uint64_t size = pointeeType(a->type, &elem) ? typeSize(TypeRef::of(elem)).value_or(1) : 1;
      auto p = readPointer(*a);
      auto k = numberOf(*b, op);
      if (!p) return p.takeError();
      if (!k) return k.takeError();
      std::uint64_t r = op == "+" ? *p + k->i * size : *p - k->i * size;
      return literalValue(f_, a->type, &r, 8);
    }
    if (op == "-" && ta == DW_TAG_pointer_type && tagOf(*b) == DW_TAG_pointer_type) {
      Dwarf_Die elem;
      std::int64_t size = pointeeType(a->type, &elem) ? static_cast<std::int64_t>(typeSize(TypeRef::of(elem)).value_or(1)) : 1;
      auto p = readPointer(*a), q = readPointer(*b);
      if (!p || !q) return Error{errors::kMemoryUnreadable, "cannot read a pointer", true};
      return makeInteger(f_, (static_cast<std::int64_t>(*p) - static_cast<std::int64_t>(*q)) / (size ? size : 1), Builtin::Long);
    }
    auto x = numberOf(*a, op);
    if (!x) return x.takeError();
    auto y = numberOf(*b, op);
    if (!y) return y.takeError();
    bool cmp = op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=";
    if (x->isFloat || y->isFloat) {
      double l = x->isFloat ? x->d : (x->isUnsigned ? static_cast<double>(static_cast<std::uint64_t>(x->i)) : static_cast<double>(x->i));
      double r = y->isFloat ? y->d : (y->isUnsigned ? static_cast<double>(static_cast<std::uint64_t>(y->i)) : static_cast<double>(y->i));
      if (cmp) {
        bool res = op == "==" ? l == r : op == "!=" ? l != r : op == "<" ? l < r : op == ">" ? l > r : op == "<=" ? l <= r : l >= r;
        return makeInteger(f_, res, Builtin::Bool);
      }
      if (op == "+") return makeDouble(f_, l + r);
      if (op == "-") return makeDouble(f_, l - r);
      if (op == "*") return makeDouble(f_, l * r);
      if (op == "/") return makeDouble(f_, l / r);
      return Error{errors::kBadOperation, "cannot apply '" + op + "' to " + typeName((x->isFloat ? *a : *b).type), true};
    }
    Builtin type = integerResult(*x, *y);
    bool uns = type == Builtin::ULong;
    std::int64_t l = x->i, r = y->i;
    if (type == Builtin::Int) {  // C's int arithmetic wraps at 32 bits
      l = static_cast<std::int32_t>(l);
      r = static_cast<std::int32_t>(r);
    }
    if (cmp) {
      bool res;
      if (uns || (x->isUnsigned && y->isUnsigned)) {
        auto ul = static_cast<std::uint64_t>(l), ur = static_cast<std::uint64_t>(r);
        res = op == "==" ? ul == ur : op == "!=" ? ul != ur : op == "<" ? ul < ur : op == ">" ? ul > ur : op == "<=" ? ul <= ur : ul >= ur;
      } else {
        res = op == "==" ? l == r : op == "!=" ? l != r : op == "<" ? l < r : op == ">" ? l > r : op == "<=" ? l <= r : l >= r;
      }
      return makeInteger(f_, res, Builtin::Bool);
    }
    std::uint64_t ul = static_cast<std::uint64_t>(l), ur = static_cast<std::uint64_t>(r), res = 0;
    if ((op == "/" || op == "%") && r == 0) return Error{errors::kDivisionByZero, "division by zero", true};
    if (op == "+") res = ul + ur;
    else if (op == "-") res = ul - ur;
    else if (op == "*") res = ul * ur;
    else if (op == "/") res = uns ? ul / ur : static_cast<std::uint64_t>(l / r);
    else if (op == "%") res = uns ? ul % ur : static_cast<std::uint64_t>(l % r);
    else if (op == "&") res = ul & ur;
    else if (op == "|") res = ul | ur;
    else if (op == "^") res = ul ^ ur;
    else if (op == "<<") res = ul << (ur & 63);
    else if (op == ">>") res = uns ? ul >> (ur & 63) : static_cast<std::uint64_t>(l >> (r & 63));
    else return Error{errors::kBadExpression, "unknown operator '" + op + "'", true};
    std::int64_t out = static_cast<std::int64_t>(res);
    if (type == Builtin::Int) out = static_cast<std::int32_t>(out);
    return makeInteger(f_, out, type);
  }

  Result<Value> cast(const Node& n) {
    auto v = operand(*n.a);
    if (!v) return v;
    auto num = numberOf(*v, "(" + n.cast.name + ")");
    if (!num) return num.takeError();
    const expr::CastSpec& c = n.cast;
    if (c.isFloat) {
      double d = num->isFloat ? num->d : (num->isUnsigned ? static_cast<double>(static_cast<std::uint64_t>(num->i)) : static_cast<double>(num->i));
      if (c.bytes == 4) d = static_cast<float>(d);
      return makeDouble(f_, d);
    }
    if (c.isBool) return makeInteger(f_, num->isFloat ? num->d != 0 : num->i != 0, Builtin::Bool);
    std::int64_t i = num->isFloat ? static_cast<std::int64_t>(num->d) : num->i;
    if (c.bytes < 8) {
      std::uint64_t mask = (1ULL << (8 * c.bytes)) - 1;
      std::uint64_t u = static_cast<std::uint64_t>(i) & mask;
      if (c.isSigned && (u >> (8 * c.bytes - 1)) & 1) u |= ~mask;
      i = static_cast<std::int64_t>(u);
    }
    if (c.bytes == 1 && c.name.find("char") != std::string::npos && c.isSigned) return makeInteger(f_, i, Builtin::Char);
    if (!c.isSigned) return makeInteger(f_, i, Builtin::ULong);
    return makeInteger(f_, i, c.bytes >= 8 ? Builtin::Long : Builtin::Int);
  }

 public:
  Result<bool> truth(const Node& n) {
    auto v = operand(n);
    if (!v) return v.takeError();
    if (!isScalar(v->type)) return Error{errors::kBadOperation, "a condition must be a number or a pointer, not " + typeName(v->type), true};
    auto num = numberOf(*v, "condition");
    if (!num) return num.takeError();
    return num->isFloat ? num->d != 0 : num->i != 0;
  }

 private:
  FramePtr f_;
};

}  // namespace

Result<Expression> Expression::parse(std::string_view text) {
  auto root = expr::parse(text);
  if (!root) return root.takeError();
  Expression e;
  e.text_ = std::string(text);
  e.root_ = std::move(*root);
  return e;
}

Result<Value> Expression::evaluate(const std::shared_ptr<const FrameContext>& frame) const {
  auto v = Evaluator(frame).eval(*root_);
  if (v && v->expression.empty()) v->expression = text_;
  return v;
}

Result<bool> Expression::evaluateCondition(const std::shared_ptr<const FrameContext>& frame) const {
  // Nothing outlives a condition's evaluation, so its reads can share one short-lived cache.
  CachedMemory cache(*frame->memory);
  auto cached = std::make_shared<FrameContext>(*frame);
  cached->memory = &cache;
  return Evaluator(cached).truth(*root_);
}

Result<Presentation> evaluateToPresentation(std::string_view text, const std::shared_ptr<const FrameContext>& frame) {
  auto e = Expression::parse(text);
  if (!e) return e.takeError();
  auto v = e->evaluate(frame);
  if (!v) return v.takeError();
  return present(*v);
}

Result<LogMessage> LogMessage::parse(std::string_view text) {
  LogMessage m;
  std::string literal;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal += c;
      ++i;
      continue;
    }
    if (c != '{') {
      literal += c;
      continue;
    }
    std::size_t close = text.find('}', i);
    if (close == std::string_view::npos) return Error{errors::kBadExpression, "'{' without '}' at column " + std::to_string(i + 1), true};
    auto e = Expression::parse(text.substr(i + 1, close - i - 1));
    if (!e) return e.takeError();
    m.parts_.push_back(Part{std::move(literal), std::make_shared<Expression>(std::move(*e))});
    literal.clear();
    i = close;
  }
  if (!literal.empty()) m.parts_.push_back(Part{std::move(literal), nullptr});
  return m;
}

std::string LogMessage::render(const std::shared_ptr<const FrameContext>& frame) const {
  std::string out;
  for (const Part& p : parts_) {
    out += p.literal;
    if (!p.expression) continue;
    auto v = p.expression->evaluate(frame);
    out += v ? present(*v).value : "<error: " + v.error().message + ">";
  }
  return out;
}

Result<DataBreakpointTarget> dataBreakpointInfo(std::string_view text, const std::shared_ptr<const FrameContext>& frame) {
  auto e = Expression::parse(text);
  if (!e) return e.takeError();
  auto v = e->evaluate(frame);
  if (!v) return v.takeError();
  auto d = decay(std::move(*v));
  if (!d) return d.takeError();
  if (d->location.kind != ValueLocation::Kind::Memory || d->bitSize != 0)
    return Error{errors::kBadWatchpoint, "'" + std::string(text) + "' is not in memory; only values in memory can be watched", true};
  auto size = typeSize(d->type).value_or(0);
  if (size != 1 && size != 2 && size != 4 && size != 8)
    return Error{errors::kBadWatchpoint, "'" + std::string(text) + "' is " + std::to_string(size) + " bytes; a data breakpoint watches 1, 2, 4 or 8 bytes", true};
  DataBreakpointTarget t;
  t.address = d->location.address;
  t.size = static_cast<std::uint32_t>(size);
  t.description = std::string(text) + " (" + typeName(d->type) + ", " + std::to_string(size) + " bytes at " +
                  detail::hexAddress(t.address) + ")";
  return t;
}

}  // namespace strata::native::symbols
