// Built without debug info: stepIn must step out of it rather than stop in it.
int nodebug_twice(int v) { return v * 2; }
