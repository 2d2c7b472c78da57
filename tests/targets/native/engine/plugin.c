// Debuggee library: loaded with dlopen by dlopen_main.c after start.
int plugin_value = 41;

int plugin_compute(int x) {  // @bp:plugin_compute
  return x + plugin_value;
}
