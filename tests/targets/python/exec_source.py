"""Debuggee: code without a file (kept in linecache, as snippet runners do) that raises."""
import linecache

SRC = "def boom(v):\n    raise KeyError(v)\n\n\nboom('from exec')\n"
linecache.cache["<generated>"] = (len(SRC), None, SRC.splitlines(True), "<generated>")
exec(compile(SRC, "<generated>", "exec"), {})
