"""Whose code a frame runs: the agent's own (everything under PKG_DIR, defined here and nowhere
else), the launcher's (runpy, python -m strata), a library's (the standard library,
site-packages) or the program's (justMyCode), and which frames bound a thread's stack."""
import os
import sys

PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def library_prefixes():
    """The standard library and site-packages folders (sysconfig is too slow to import)."""
    out = {os.path.normcase(os.path.dirname(os.path.abspath(os.__file__))) + os.sep}
    for p in sys.path:
        if p.endswith(("site-packages", "dist-packages")):
            out.add(os.path.normcase(os.path.abspath(p)) + os.sep)
    return tuple(out)


def is_boundary(frame):
    """Where a thread's own stack begins: the agent's frames, threading's bootstrap."""
    code = frame.f_code
    if code.co_filename.startswith(PKG_DIR):
        return True
    return code.co_name in ("_bootstrap_inner", "_bootstrap") and code.co_filename.endswith("threading.py")


def is_launcher(frame):
    fn = frame.f_code.co_filename
    return fn.startswith(PKG_DIR) or fn == "<frozen runpy>" or fn.endswith(os.sep + "runpy.py")


class UserCode:
    """justMyCode: whether a frame's code is the program's, cached per file."""

    def __init__(self):
        self.just_my_code = True
        self._cache = {}
        self._lib = library_prefixes()

    def set_just_my_code(self, on):
        self.just_my_code = on
        self._cache.clear()

    def is_user(self, frame):
        fn = frame.f_code.co_filename
        got = self._cache.get(fn)
        if got is None:
            # <strata-gpu-hooks>: the GPU collector's wrapper around torch's autograd engine.
            if fn.startswith(PKG_DIR) or fn.startswith("<frozen") or fn.startswith("<strata-gpu"):
                got = False
            elif fn.startswith("<"):
                return self._generated_is_user(frame)
            else:
                c = os.path.normcase(os.path.abspath(fn))
                got = not (self.just_my_code and c.startswith(self._lib))
            self._cache[fn] = got
        return got

    def _generated_is_user(self, frame):
        """Code without a file ('<string>': exec, eval, -c) belongs to whoever runs it: the
        library's namedtuple and dataclass methods are the library's, the program's exec and
        a -c script are the program's."""
        if not self.just_my_code:
            return True
        f = frame.f_back
        while f is not None:
            if is_launcher(f):
                return True
            fn = f.f_code.co_filename
            if not fn.startswith("<") or fn.startswith("<frozen"):
                return self.is_user(f)
            f = f.f_back
        return True
