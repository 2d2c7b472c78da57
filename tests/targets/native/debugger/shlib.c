// A shared library the debuggee links against (-g): its calls go through PLT stubs.
int shlib_triple(int v) {
  int tripled = v * 3;  // @bp:shlib_body
  return tripled;
}

// Calls shlib_triple from inside the library: through the library's own PLT stub (-fPIC, a
// global function another module could interpose), as C++ templates and inline functions of an
// extension module are called.
int shlib_nine(int v) {
  int once = shlib_triple(v);  // @bp:shlib_inner_call
  return shlib_triple(once);  // @bp:shlib_inner_again
}
