// Expression parser: tokens, precedence climbing, casts to base types; errors say where.
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "expression_ast.hpp"

namespace strata::native::symbols::expr {

namespace {

enum class Tok { End, Number, Char, String, Ident, Punct };

struct Token {
  Tok kind = Tok::End;
  std::string text;
  std::size_t column = 0;
};

Result<char> unescape(std::string_view s, std::size_t& i) {
  char c = s[i++];
  if (c != '\\') return c;
  if (i >= s.size()) return Error{errors::kBadExpression, "unterminated escape", true};
  char e = s[i++];
  switch (e) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case '0': return '\0';
    case '\\': return '\\';
    case '\'': return '\'';
    case '"': return '"';
    default: return Error{errors::kBadExpression, std::string("unknown escape \\") + e, true};
  }
}

Result<std::vector<Token>> tokenize(std::string_view s) {
  static const char* puncts[] = {"->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "[", "]", ".",
                                 "*",  "&",  "-",  "+",  "!",  "~",  "/",  "%",  "<",  ">",  "^", "|"};
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    Token t;
    t.column = i + 1;
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' ||
                              ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E') && !(s[i] == '0' && i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X')))))
        ++j;
      t.kind = Tok::Number;
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      // "ns::name" is one identifier: qualified globals.
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' ||
                              (s[j] == ':' && j + 1 < s.size() && s[j + 1] == ':')))
        j += s[j] == ':' ? 2 : 1;
      t.kind = Tok::Ident;
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else if (c == '\'' || c == '"') {
      std::size_t j = i + 1;
      std::string value;
      while (j < s.size() && s[j] != c) {
        auto ch = unescape(s, j);
        if (!ch) return Error{ch.error().id, ch.error().message + " at column " + std::to_string(t.column), true};
        value += *ch;
      }
      if (j >= s.size()) return Error{errors::kBadExpression, std::string("unterminated ") + (c == '"' ? "string" : "character") + " literal at column " + std::to_string(t.column), true};
      if (c == '\'' && value.size() != 1) return Error{errors::kBadExpression, "a character literal holds one character (column " + std::to_string(t.column) + ")", true};
      t.kind = c == '"' ? Tok::String : Tok::Char;
      t.text = value;
      i = j + 1;
    } else {
      bool matched = false;
      for (const char* p : puncts) {
        std::size_t n = std::strlen(p);
        if (s.substr(i, n) == p) {
          t.kind = Tok::Punct;
          t.text = p;
          i += n;
          matched = true;
          break;
        }
      }
      if (!matched) return Error{errors::kBadExpression, std::string("unexpected '") + c + "' at column " + std::to_string(t.column), true};
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.column = s.size() + 1;
  out.push_back(end);
  return out;
}

bool castSpecFor(const std::vector<std::string>& words, CastSpec& spec) {
  std::string joined;
  for (const auto& w : words) joined += (joined.empty() ? "" : " ") + w;
  struct Entry {
    const char* name;
    int bytes;
    bool isSigned, isFloat, isBool;
  };
  static const Entry table[] = {
      {"char", 1, true, false, false},           {"signed char", 1, true, false, false},
      {"unsigned char", 1, false, false, false}, {"short", 2, true, false, false},
      {"unsigned short", 2, false, false, false}, {"int", 4, true, false, false},
      {"signed", 4, true, false, false},         {"unsigned", 4, false, false, false},
      {"unsigned int", 4, false, false, false},  {"long", 8, true, false, false},
      {"long int", 8, true, false, false},       {"unsigned long", 8, false, false, false},
      {"long long", 8, true, false, false},      {"unsigned long long", 8, false, false, false},
      {"float", 4, true, true, false},           {"double", 8, true, true, false},
      {"bool", 1, false, false, true},           {"_Bool", 1, false, false, true},
      {"int8_t", 1, true, false, false},         {"uint8_t", 1, false, false, false},
      {"int16_t", 2, true, false, false},        {"uint16_t", 2, false, false, false},
      {"int32_t", 4, true, false, false},        {"uint32_t", 4, false, false, false},
      {"int64_t", 8, true, false, false},        {"uint64_t", 8, false, false, false},
      {"size_t", 8, false, false, false},        {"ssize_t", 8, true, false, false}};
  for (const Entry& e : table) {
    if (joined == e.name) {
      spec = CastSpec{joined, e.bytes, e.isSigned, e.isFloat, e.isBool};
      return true;
    }
  }
  return false;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Result<std::shared_ptr<Node>> parseAll() {
    auto e = binary(0);
    if (!e) return e;
    if (peek().kind != Tok::End) return unexpected();
    return e;
  }

 private:
  const Token& peek(std::size_t ahead = 0) const { return t_[std::min(pos_ + ahead, t_.size() - 1)]; }
  bool isPunct(const char* p, std::size_t ahead = 0) const { return peek(ahead).kind == Tok::Punct && peek(ahead).text == p; }
  Error unexpected() const {
    const Token& t = peek();
    if (t.kind == Tok::End) return Error{errors::kBadExpression, "unexpected end of expression", true};
    return Error{errors::kBadExpression, "unexpected '" + t.text + "' at column " + std::to_string(t.column), true};
  }

  static int precedence(const std::string& op) {
    static const std::pair<const char*, int> table[] = {
        {"||", 1}, {"&&", 2}, {"|", 3}, {"^", 4}, {"&", 5}, {"==", 6}, {"!=", 6}, {"<", 7}, {">", 7},
        {"<=", 7}, {">=", 7}, {"<<", 8}, {">>", 8}, {"+", 9}, {"-", 9}, {"*", 10}, {"/", 10}, {"%", 10}};
    for (auto& [name, p] : table)
      if (op == name) return p;
    return -1;
  }

  Result<std::shared_ptr<Node>> binary(int minPrec) {
    auto left = unary();
    if (!left) return left;
    for (;;) {
      if (peek().kind != Tok::Punct) break;
      int prec = precedence(peek().text);
      if (prec < 0 || prec <= minPrec - 1 || prec < minPrec) break;
      std::string op = peek().text;
      ++pos_;
      auto right = binary(prec + 1);
      if (!right) return right;
      auto n = std::make_shared<Node>();
      n->kind = Kind::Binary;
      n->text = op;
      n->a = *left;
      n->b = *right;
      left = n;
    }
    return left;
  }

  Result<std::shared_ptr<Node>> unary() {
    if (peek().kind == Tok::Punct) {
      const std::string op = peek().text;
      if (op == "-" || op == "!" || op == "*" || op == "&" || op == "~" || op == "+") {
        ++pos_;
        auto operand = unary();
        if (!operand) return operand;
        if (op == "+") return operand;
        auto n = std::make_shared<Node>();
        n->kind = Kind::Unary;
        n->text = op;
        n->a = *operand;
        return n;
      }
      if (op == "(") {
        // A cast when the parentheses hold only base type words.
        std::vector<std::string> words;
        std::size_t k = 1;
        while (peek(k).kind == Tok::Ident) words.push_back(peek(k++).text);
        CastSpec spec;
        if (!words.empty() && isPunct(")", k) && castSpecFor(words, spec)) {
          pos_ += k + 1;
          auto operand = unary();
          if (!operand) return operand;
          auto n = std::make_shared<Node>();
          n->kind = Kind::Cast;
          n->cast = spec;
          n->a = *operand;
          return n;
        }
      }
    }
    return postfix();
  }

  Result<std::shared_ptr<Node>> postfix() {
    auto e = primary();
    if (!e) return e;
    for (;;) {
      if (isPunct(".") || isPunct("->")) {
        bool arrow = peek().text == "->";
        ++pos_;
        if (peek().kind != Tok::Ident) return Error{errors::kBadExpression, std::string("expected a member name after '") + (arrow ? "->" : ".") + "'", true};
        auto n = std::make_shared<Node>();
        n->kind = arrow ? Kind::Arrow : Kind::Member;
        n->text = peek().text;
        n->a = *e;
        ++pos_;
        e = n;
      } else if (isPunct("[")) {
        ++pos_;
        auto index = binary(0);
        if (!index) return index;
        if (!isPunct("]")) return Error{errors::kBadExpression, "expected ']' at column " + std::to_string(peek().column), true};
        ++pos_;
        auto n = std::make_shared<Node>();
        n->kind = Kind::Index;
        n->a = *e;
        n->b = *index;
        e = n;
      } else {
        return e;
      }
    }
  }

  Result<std::shared_ptr<Node>> primary() {
    const Token& t = peek();
    auto n = std::make_shared<Node>();
    switch (t.kind) {
      case Tok::Number: {
        std::string text = t.text;
        bool hex = text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
        bool isFloat = !hex && (text.find_first_of(".eE") != std::string::npos);
        char* end = nullptr;
        if (isFloat) {
          n->kind = Kind::Float;
          n->real = std::strtod(text.c_str(), &end);
          if (*end == 'f' || *end == 'F') ++end;
        } else {
          n->kind = Kind::Int;
          unsigned long long v = std::strtoull(text.c_str(), &end, 0);
          bool isUnsigned = false, isLong = false;
          while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L') {
            (*end == 'u' || *end == 'U' ? isUnsigned : isLong) = true;
            ++end;
          }
          n->integer = static_cast<std::int64_t>(v);
          n->literalType = isUnsigned ? Builtin::ULong : (isLong || v > 0x7fffffffULL) ? Builtin::Long : Builtin::Int;
        }
        if (*end != '\0') return Error{errors::kBadExpression, "malformed number '" + text + "' at column " + std::to_string(t.column), true};
        ++pos_;
        return n;
      }
      case Tok::Char:
        n->kind = Kind::Char;
        n->integer = static_cast<unsigned char>(t.text[0]);
        ++pos_;
        return n;
      case Tok::String:
        n->kind = Kind::String;
        n->text = t.text;
        ++pos_;
        return n;
      case Tok::Ident:
        if (t.text == "true" || t.text == "false") {
          n->kind = Kind::Bool;
          n->integer = t.text == "true";
        } else if (t.text == "nullptr" || t.text == "NULL") {
          n->kind = Kind::Int;
          n->literalType = Builtin::Long;
        } else {
          n->kind = Kind::Name;
          n->text = t.text;
        }
        ++pos_;
        return n;
      case Tok::Punct:
        if (t.text == "(") {
          ++pos_;
          auto inner = binary(0);
          if (!inner) return inner;
          if (!isPunct(")")) return Error{errors::kBadExpression, "expected ')' at column " + std::to_string(peek().column), true};
          ++pos_;
          return inner;
        }
        return unexpected();
      case Tok::End:
        return unexpected();
    }
    return unexpected();
  }

  std::vector<Token> t_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<std::shared_ptr<Node>> parse(std::string_view text) {
  auto tokens = tokenize(text);
  if (!tokens) return tokens.takeError();
  if (tokens->size() == 1) return Error{errors::kBadExpression, "empty expression", true};
  return Parser(std::move(*tokens)).parseAll();
}

}  // namespace strata::native::symbols::expr
