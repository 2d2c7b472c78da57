// A library the debuggee dlopens after start: home of a pending breakpoint.
int plugin_compute(int v) {
  int doubled = v * 2;  // @bp:plugin_line
  return doubled + 1;
}
