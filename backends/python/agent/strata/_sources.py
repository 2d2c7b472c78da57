"""Source lines for the agent, without importing linecache (and with it tokenize, re and enum).

Importing linecache costs 8-15 ms in a program that has not loaded re yet, and it cannot be
done lazily on the adapter's thread while program threads are parked: one of them could be
stopped halfway through importing a module linecache needs, and the import would wait on its
lock forever. So the agent reads files itself, and consults linecache only when the program
has already imported it (then its cache may hold sources registered for `<...>` names).
"""
import codecs
import os
import sys


def getlines(name):
    lc = sys.modules.get("linecache")
    get = getattr(lc, "getlines", None)
    if get is not None:
        return get(name)
    if not name or (name.startswith("<") and name.endswith(">")):
        # Only linecache's cache can hold such a source, and nobody has imported it.
        return []
    return _read(name)


def _read(name):
    path = name
    if not os.path.isabs(path) and not os.path.exists(path):
        # As linecache does for a relative file name: look along sys.path.
        for d in sys.path:
            if isinstance(d, str) and os.path.exists(os.path.join(d, name)):
                path = os.path.join(d, name)
                break
    try:
        with open(path, "rb") as f:
            data = f.read()
        text = data.decode(_encoding(data))
    except (OSError, UnicodeDecodeError, LookupError, ValueError):
        return []
    # Universal newlines, as a text file read would give.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # Split only at "\n" as readlines does; linecache ends the last line with one too.
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()
    return [ln + "\n" for ln in lines]


def _cookie(line):
    """The PEP 263 encoding named on a comment line, or None."""
    s = line.lstrip(" \t\f")
    if not s.startswith("#"):
        return None
    i = s.find("coding")
    while i >= 0:
        j = i + 6
        if j < len(s) and s[j] in ":=":
            j += 1
            while j < len(s) and s[j] in " \t":
                j += 1
            k = j
            while k < len(s) and (s[k].isalnum() or s[k] in "-_."):
                k += 1
            if k > j:
                return s[j:k]
        i = s.find("coding", i + 1)
    return None


def _encoding(data):
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    first, _, rest = data.partition(b"\n")
    for n, raw in enumerate((first, rest.partition(b"\n")[0])):
        line = raw.decode("latin-1")
        name = _cookie(line)
        if name:
            return codecs.lookup(name).name
        # The second line counts only below a blank or comment-only first line.
        if n == 0 and line.strip(" \t\f\r") and not line.lstrip(" \t\f").startswith("#"):
            break
    return "utf-8"
