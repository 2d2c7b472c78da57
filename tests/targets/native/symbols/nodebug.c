/* A library built without debug information: frames in it show as module!symbol+offset. */
int nodebug_call(int (*callback)(int), int value) {
  int r = callback(value);
  return r + 1;
}
