// Test target for the symbols library: C++ classes, references, STL containers, templates, recursion.
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace shapes {
struct Base {
  int id = 7;
  virtual ~Base() = default;
  virtual int area() const { return 0; }
};
class Rect : public Base {
 public:
  Rect(int w, int h) : w_(w), h_(h) {}
  int area() const override { return w_ * h_; }
  int width() const { return w_; }
  int scaled(int k) const {
    raise(SIGTRAP);  // @bp:method
    return w_ * k;
  }

 private:
  int w_;
  int h_;
};
}  // namespace shapes

template <typename T>
T twice(T v) {
  return v + v;  // @line:twice
}

inline int inc(int v) {
  return v + 1;
}

int recurse(int n) {
  if (n == 0) {
    raise(SIGTRAP);  // @bp:deep
    return 0;
  }
  return recurse(n - 1) + 1;
}

int main() {
  std::vector<int> v = {1, 2, 3};
  std::string s = "hello world";
  std::map<std::string, int> m = {{"one", 1}, {"two", 2}};
  std::unordered_map<int, std::string> um = {{1, "a"}};
  auto up = std::make_unique<int>(5);
  auto sp = std::make_shared<std::string>("shared");
  std::optional<int> opt = 9;  // read by the tests, not the program
  (void)opt;
  std::optional<int> none;
  shapes::Rect r(3, 4);
  shapes::Base& ref = r;
  std::vector<int> big(100000, 7);
  int tw = twice(21) + static_cast<int>(twice(1.5));
  int in = inc(41);
  raise(SIGTRAP);  // @bp:containers
  recurse(1000);
  tw += r.scaled(5);
  return r.area() + tw + in + ref.id + r.width() > 0 ? 0 : 1;
}
