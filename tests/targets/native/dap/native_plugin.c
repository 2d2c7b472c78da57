// A library the native end-to-end tests' debuggee dlopens after it started.
int plugin_compute(int x) {
  int doubled = x * 2;  // @bp:plugin_body
  return doubled + 2;
}
