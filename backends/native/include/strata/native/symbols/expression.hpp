// C-like expressions over DWARF for conditions, log messages, watch, hover and the REPL.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/native/symbols/values.hpp"

namespace strata::native::symbols {

namespace expr {
struct Node;
}

// Parsed once, evaluated many times: a breakpoint condition keeps its Expression and calls
// evaluateCondition on each hit. Names are resolved on the first evaluation at a location and
// remembered, so a later hit at the same pc only reads memory and registers.
class Expression {
 public:
  // Literals (42, 0x2a, 1.5, 'c', "s"), names, . -> [] , unary * & - ! ~, * / % + -, << >>,
  // comparisons, & ^ |, && ||, casts to base types ((int)x), parentheses. [] also indexes
  // std::vector and looks up std::map / std::unordered_map keys; -> and * see through smart pointers.
  static Result<Expression> parse(std::string_view text);
  Result<Value> evaluate(const std::shared_ptr<const FrameContext>& frame) const;
  Result<bool> evaluateCondition(const std::shared_ptr<const FrameContext>& frame) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::shared_ptr<expr::Node> root_;
};

// Evaluates and presents in one step (watch, hover, REPL).
Result<Presentation> evaluateToPresentation(std::string_view text, const std::shared_ptr<const FrameContext>& frame);

// A logMessage with {expression} parts; "{{" and "}}" are literal braces.
class LogMessage {
 public:
  static Result<LogMessage> parse(std::string_view text);
  // A part that fails to evaluate shows as <error: message>, never aborts the message.
  std::string render(const std::shared_ptr<const FrameContext>& frame) const;

 private:
  struct Part {
    std::string literal;
    std::shared_ptr<Expression> expression;
  };
  std::vector<Part> parts_;
};

// dataBreakpointInfo: where an lvalue of 1, 2, 4 or 8 bytes lives.
struct DataBreakpointTarget {
  std::uint64_t address = 0;
  std::uint32_t size = 0;
  std::string description;  // "pt.x (int, 4 bytes at 0x7ffd...)"
};
Result<DataBreakpointTarget> dataBreakpointInfo(std::string_view expression,
                                                const std::shared_ptr<const FrameContext>& frame);

}  // namespace strata::native::symbols
