// Debuggee library: loaded with dlopen by dlopen_main.c after start; its constructor runs first.
int plugin_value = 40;

__attribute__((constructor)) static void plugin_init(void) {  // @bp:plugin_init
  plugin_value += 1;
}

int plugin_compute(int x) {  // @bp:plugin_compute
  return x + plugin_value;
}
