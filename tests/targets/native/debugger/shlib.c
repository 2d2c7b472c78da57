// A shared library the debuggee links against (-g): its calls go through PLT stubs.
int shlib_triple(int v) {
  int tripled = v * 3;  // @bp:shlib_body
  return tripled;
}
