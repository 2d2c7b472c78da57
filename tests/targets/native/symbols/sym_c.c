/* Test target for the symbols library: C types, globals, a loop and stops the tests inspect. */
#include <signal.h>

enum Color { RED, GREEN = 5, BLUE };
struct Point {
  int x;
  int y;
};
struct Flags {
  unsigned a : 3;
  unsigned b : 5;
  int c : 4;
};
union Number {
  int i;
  float f;
  unsigned char bytes[4];
};
typedef struct Point PointT;
struct Node {
  int value;
  struct Node* next;
};

int g_counter = 42;
const char* g_greeting = "hello";
static double g_ratio = 2.5;
int g_array[5] = {1, 2, 3, 4, 5};
struct Point g_origin = {0, 0};

int nodebug_call(int (*callback)(int), int value); /* libstrata_sym_nodebug.so, built -g0 */

static int trap_cb(int v) {
  raise(SIGTRAP); /* @bp:cb */
  return v * 2;
}

static int square(int v) {
  return v * v;
}

int add_points(struct Point* p, const struct Point q, int scale) {
  int sum = p->x + q.x; /* @line:add_body */
  sum += square(p->y + q.y) * scale;
  raise(SIGTRAP); /* @bp:add */
  return sum;
}

int main(void) {
  struct Point pt = {3, 4};
  PointT other = {10, 20};
  struct Flags flags = {5, 17, -3};
  union Number num;
  num.i = 0x3f800000;
  enum Color color = GREEN;
  int numbers[4] = {7, 8, 9, 10};
  int* ptr = &numbers[2];
  char name[8] = "strata";
  const char* text = "quote\"d";
  struct Node n2 = {2, 0};
  struct Node n1 = {1, &n2};
  struct Node ring = {7, 0};
  ring.next = &ring; /* a cycle: presenting it must not recurse forever */
  struct Point pts[2] = {{1, 2}, {5, 6}};
  const volatile long big = 1234567890123L;
  double ratio = 0.5;
  int total = add_points(&pt, other, 2);
  raise(SIGTRAP); /* @bp:main */

  for (int i = 0; i < 3; i++) { /* @line:loop */
    g_counter += i;
  }
  total += nodebug_call(trap_cb, 3);
  (void)flags; (void)num; (void)color; (void)ptr; (void)name; (void)text; (void)n1; (void)ring; (void)pts; (void)big; (void)ratio;
  (void)g_ratio;
  return total == 0 ? 1 : 0;
}
