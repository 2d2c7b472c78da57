"""Variables: safe reprs under a time limit, lazy paged children, tensor and module summaries."""
import keyword
import threading
import time

from . import _link

REPR_LIMIT_S = 0.5
VALUE_CHARS = 1000
PREVIEW_ITEMS = 30
DEFAULT_PAGE = 1000
MEMBERS_LIMIT_S = 0.5


class ReprTimeout(BaseException):
    """Raised asynchronously inside a repr that ran past its time limit."""


class ReprGuard:
    """Interrupts a repr on the inspecting thread when it runs longer than REPR_LIMIT_S."""

    def __init__(self, monitor, internal):
        self.monitor = monitor
        self.internal = internal
        self.cv = threading.Condition()
        self.target = None
        self.item_start = None
        self.item_limit = REPR_LIMIT_S
        self.sleeping = True
        # Started before any instrumentation exists, so it can never be parked by a stop.
        self.thread = threading.Thread(target=self._loop, name="strata.repr-guard", daemon=True)
        self.thread.start()
        self.internal.add(self.thread.ident)

    def _loop(self):
        _link.name_os_thread("strata.repr-guard")
        # Polls while requests come in, sleeps on the condition after a second without
        # one: a burst of requests costs no wake-up each, an idle agent costs nothing.
        idle = 0
        while True:
            with self.cv:
                while self.sleeping:
                    self.cv.wait()
            target, started = self.target, self.item_start
            if target is None:
                idle += 1
                if idle > 50:
                    idle = 0
                    with self.cv:
                        if self.target is None:
                            self.sleeping = True
                    continue
            else:
                idle = 0
                if started is not None and time.monotonic() - started > self.item_limit:
                    self.item_start = None
                    self.monitor.core.async_raise(target, ReprTimeout)
            time.sleep(0.02)

    def begin(self):
        with self.cv:
            self.target = threading.get_ident()
            if self.sleeping:
                self.sleeping = False
                self.cv.notify()

    def run(self, fn, limit):
        """fn() under a time limit; ReprTimeout when it runs longer."""
        self.item_limit = limit
        self.item_start = time.monotonic()
        try:
            return fn()
        finally:
            self.item_start = None

    def end(self):
        self.target = None
        self.item_start = None
        core = self.monitor.core
        if not getattr(core, "TRACING", False):
            core.async_raise(threading.get_ident(), None)
            return
        # 3.10 and 3.11 keep the interpreter's async-exception flag set after a clear, and every
        # thread then handles its eval breaker at every check; under tracing, a function's
        # first instruction handles it again forever. A timeout that came too late is taken here
        # instead (the breaker is checked at the loop's jump back), which clears the flag.
        if core.async_pending(threading.get_ident()):
            try:
                for _ in range(4):
                    pass
            except ReprTimeout:
                pass


def is_tensor_like(v):
    if isinstance(v, type):
        return False
    try:
        return hasattr(v, "shape") and hasattr(v, "dtype") and isinstance(tuple(v.shape), tuple)
    except Exception:
        return False


def is_module_like(v):
    return _registries(v) is not None


def _numel(t):
    """Element count from metadata (numel() or the shape), None when the tensor has none yet."""
    try:
        return int(t.numel())
    except Exception:
        pass
    try:
        n = 1
        for d in t.shape:
            n *= int(d)
        return n
    except Exception:
        return None


def _registries(m):
    """A module's (_parameters, _buffers, _modules) dicts, or None for anything else."""
    d = getattr(m, "__dict__", None)
    if not isinstance(d, dict):
        return None
    p, b, c = d.get("_parameters"), d.get("_buffers"), d.get("_modules")
    if isinstance(p, dict) and isinstance(b, dict) and isinstance(c, dict):
        return p, b, c
    return None


class ModuleMembers:
    """A module's parameters and buffers as named_parameters() and named_buffers() give them:
    recursive, by qualified name ("0.weight"), each tensor once, each module once (its first
    place in a depth-first walk), a module's own tensors first; and its children as
    named_children() gives them. Walked over the registries (_parameters, _buffers, _modules),
    so no code of the program runs but numel(); stops, marked incomplete, after
    MEMBERS_LIMIT_S. Without a page it counts, and keeps nothing; with one, (kind, start,
    stop), it keeps that page of one kind ('parameters', 'buffers' or 'children') in items."""

    KINDS = ("parameters", "buffers", "children")

    def __init__(self, module, page=None, limit=None):
        self.count = {k: 0 for k in self.KINDS}
        self.direct = {"parameters": 0, "buffers": 0}
        self.numel = {"parameters": 0, "buffers": 0}  # None once a tensor has no size yet
        self.items = []
        self.complete = True
        self.children_complete = True
        which, first, stop = page or (None, 0, 0)
        deadline = time.monotonic() + (MEMBERS_LIMIT_S if limit is None else limit)
        if which in (None, "children"):
            reg = module.__dict__["_modules"]
            seen = set()
            for i, (k, c) in enumerate(zip(list(reg), list(reg.values()))):
                if not i % 1024 and i and time.monotonic() > deadline:
                    self.complete = self.children_complete = False
                    return
                if c is not None and id(c) not in seen:
                    seen.add(id(c))
                    n = self.count["children"]
                    if which == "children" and first <= n < stop:
                        self.items.append((k, c))
                    self.count["children"] = n + 1
            if which == "children":
                return
        seen = {"parameters": set(), "buffers": set()}
        visited = set()
        # Parallel stacks, no tuples and nothing kept: a walk of 100,000 modules gives the
        # garbage collector nothing new to trace.
        prefixes, stack = [""], [module]
        while stack:
            prefix, m = prefixes.pop(), stack.pop()
            if time.monotonic() > deadline:
                self.complete = False
                return
            if id(m) in visited:
                continue
            regs = _registries(m)
            if regs is None:
                continue
            visited.add(id(m))
            for kind, reg in (("parameters", regs[0]), ("buffers", regs[1])):
                if which is not None and kind != which:
                    continue
                done = seen[kind]
                for k, t in zip(list(reg), list(reg.values())):
                    if t is None or id(t) in done:
                        continue
                    done.add(id(t))
                    n = self.count[kind]
                    self.count[kind] = n + 1
                    if which is not None:
                        if n >= first:
                            self.items.append((prefix + k, t))
                            if n + 1 >= stop:
                                return
                        continue
                    if m is module:
                        self.direct[kind] += 1
                    if self.numel[kind] is not None:
                        size = _numel(t)
                        self.numel[kind] = None if size is None else self.numel[kind] + size
            subs = regs[2]
            names, subs = list(subs), list(subs.values())
            for i in range(len(subs) - 1, -1, -1):
                if subs[i] is not None:
                    prefixes.append(prefix + names[i] + ".")
                    stack.append(subs[i])

    def text(self, kind):
        """'161 in 4 tensors (0 direct)': values, tensors, and the module's own tensors where
        they are not all of them; '+' where the walk stopped early."""
        n, numel, direct = self.count[kind], self.numel[kind], self.direct[kind]
        more = "" if self.complete else "+"
        if not n:
            return "0" if self.complete else "?"
        s = f"{'?' if numel is None else numel}{more} in {n}{more} tensor{'' if n == 1 and self.complete else 's'}"
        if direct != n:
            s += f" ({direct} direct)"
        return s

    def children_text(self):
        n = self.count["children"]
        return f"{n}{'' if self.children_complete else '+'}"

    def summary(self, name):
        return (f"{name}(parameters={self.text('parameters')}, buffers={self.text('buffers')}, "
                f"children={self.children_text()})")


def _member_expression(ev, qualified):
    """An expression for a module member by its qualified name: attribute access where each part
    is an identifier, getattr where it is not (Sequential's '0')."""
    out = ev
    for part in qualified.split("."):
        if part.isidentifier() and not keyword.iskeyword(part):
            out = f"{out}.{part}"
        else:
            out = f"getattr({out}, {part!r})"
    return out


def tensor_summary(v):
    """Shape, dtype, device: metadata only, never the data (no repr, item or tolist)."""
    t = type(v).__name__
    parts = []
    try:
        parts.append("shape=(" + ", ".join(str(int(d)) for d in v.shape) + ("," if len(v.shape) == 1 else "") + ")")
    except Exception:
        pass
    for attr in ("dtype", "device", "requires_grad"):
        try:
            if hasattr(v, attr):
                parts.append(f"{attr}={getattr(v, attr)}")
        except Exception:
            pass
    return f"{t}({', '.join(parts)})"


def _truncate(s):
    if len(s) > VALUE_CHARS:
        return s[:VALUE_CHARS] + f"... ({len(s)} chars)"
    return s


class Inspector:
    def __init__(self, guard):
        self.guard = guard
        self.refs = {}
        self.next_ref = 1
        # A module's members, walked once per request: {id(module): (module, ModuleMembers)}.
        self._members = None

    def clear(self):
        self.refs.clear()

    def members(self, m):
        """Module m's ModuleMembers, walked once per request (the memo holds m: its id stays m's)."""
        if self._members is None:
            return ModuleMembers(m)
        got = self._members.get(id(m))
        if got is None or got[0] is not m:
            got = (m, ModuleMembers(m))
            self._members[id(m)] = got
        return got[1]

    def _request(self):
        """Starts a request's memo of module walks; True when this call owns it."""
        if self._members is None:
            self._members = {}
            return True
        return False

    def new_ref(self, provider):
        ref = self.next_ref
        self.next_ref += 1
        self.refs[ref] = provider
        return ref

    # ---- values -------------------------------------------------------------------------
    def safe_repr(self, v, depth=0):
        g = self.guard
        if is_tensor_like(v):
            return tensor_summary(v)
        if is_module_like(v):
            # The walk stops itself after MEMBERS_LIMIT_S; the guard is for a numel() that hangs.
            g.item_limit = MEMBERS_LIMIT_S * 2
            g.item_start = time.monotonic()
            try:
                return self.members(v).summary(type(v).__name__)
            except ReprTimeout:
                return f"{type(v).__name__}(<counting its parameters took longer than {MEMBERS_LIMIT_S * 2:g} s>)"
            except Exception as e:
                return f"{type(v).__name__}(<its parameters could not be counted: {type(e).__name__}: {e}>)"
            finally:
                g.item_start = None
        t = type(v)
        try:
            if t is str or t is bytes or t is bytearray:
                if len(v) > VALUE_CHARS:
                    return repr(v[:VALUE_CHARS]) + f"... (length {len(v)})"
                return repr(v)
            if t in (list, tuple, set, frozenset, dict) or t.__name__ == "deque":
                n = len(v)
                if n > PREVIEW_ITEMS or depth > 0:
                    return self._preview(v, n, depth)
            g.item_limit = REPR_LIMIT_S
            g.item_start = time.monotonic()
            try:
                r = repr(v)
            finally:
                g.item_start = None
            return _truncate(r)
        except ReprTimeout:
            return f"<repr() of {t.__name__} took longer than {REPR_LIMIT_S:g} s>"
        except Exception as e:
            return f"<repr() raised {type(e).__name__}: {e}>"

    def _preview(self, v, n, depth):
        t = type(v)
        if depth > 1:
            return f"{t.__name__} (length {n})"
        items = []
        it = iter(v.items()) if isinstance(v, dict) else iter(v)
        for k, x in zip(range(min(n, 10)), it):
            if isinstance(v, dict):
                items.append(f"{self.safe_repr(x[0], depth + 1)}: {self.safe_repr(x[1], depth + 1)}")
            else:
                items.append(self.safe_repr(x, depth + 1))
        more = ", ..." if n > len(items) else ""
        open_, close = {list: "[]", tuple: "()", dict: "{}", set: "{}", frozenset: "{}"}.get(t, "[]")
        body = open_[0] + ", ".join(items) + more + close[-1]
        if t.__name__ == "deque":
            body = f"deque({body})"
        return _truncate(body + (f" (length {n})" if n > len(items) else ""))

    def variable(self, name, value, evaluate_name=None):
        own = self._request()
        try:
            return self._variable(name, value, evaluate_name)
        finally:
            if own:
                self._members = None

    def _variable(self, name, value, evaluate_name):
        var = {"name": name, "value": self.safe_repr(value), "type": type(value).__qualname__,
               "variablesReference": 0}
        if evaluate_name:
            var["evaluateName"] = evaluate_name
        indexed, named = self.child_counts(value)
        if indexed or named:
            var["variablesReference"] = self.new_ref(("obj", value, evaluate_name))
            if indexed:
                var["indexedVariables"] = indexed
            if named:
                var["namedVariables"] = named
        if is_tensor_like(value):
            var["presentationHint"] = {"kind": "data"}
        return var

    def child_counts(self, v):
        """(indexed, named) children, computed without touching element data."""
        if v is None or isinstance(v, (int, float, complex, bool, type(...))):
            return 0, 0
        if is_tensor_like(v):
            try:
                shape = tuple(v.shape)
            except Exception:
                shape = ()
            return (int(shape[0]) if shape else 0), 4
        if is_module_like(v):
            return 0, 3
        if isinstance(v, (str, bytes, bytearray)):
            return (len(v) if len(v) > 1 else 0), 0
        if isinstance(v, (list, tuple, dict, set, frozenset)) or type(v).__name__ == "deque":
            return len(v), 0
        return 0, len(self._named(v))

    def _named(self, v):
        out = []
        d = getattr(v, "__dict__", None)
        if isinstance(d, dict):
            out.extend((k, d[k], "attr") for k in list(d))
        for k in getattr(type(v), "__slots__", ()) or ():
            if isinstance(k, str) and hasattr(v, k):
                out.append((k, getattr(v, k), "attr"))
        cls_attrs = []
        if not isinstance(v, type):
            for klass in type(v).__mro__[:-1]:
                for k, x in vars(klass).items():
                    if k.startswith("__") or callable(x) or isinstance(x, (staticmethod, classmethod, property)):
                        continue
                    if k not in dict((a[0], 1) for a in cls_attrs):
                        cls_attrs.append((k, x))
        if cls_attrs:
            out.append(("class attributes", cls_attrs, "group"))
        return out

    # ---- children -----------------------------------------------------------------------
    def children(self, ref, filter_=None, start=0, count=0):
        prov = self.refs.get(ref)
        if prov is None:
            raise KeyError(f"unknown variablesReference {ref}")
        kind = prov[0]
        own = self._request()
        self.guard.begin()
        try:
            if kind == "scope":
                return self._scope(prov, start, count)
            if kind == "group":
                return [self.variable(k, x, None) for k, x in self._page(prov[1], start, count)]
            if kind == "members":
                return self._module_members(prov, filter_, start, count)
            return self._object(prov[1], prov[2], filter_, start, count)
        finally:
            self.guard.end()
            if own:
                self._members = None

    @staticmethod
    def _page(seq, start, count):
        start = max(0, start or 0)
        end = start + count if count else None
        return seq[start:end]

    def _scope(self, prov, start, count):
        _, which, frame = prov
        if which == "locals":
            mapping = frame.f_locals
        else:
            mapping = frame.f_globals
        keys = [k for k in list(mapping) if not (which == "globals" and k == "__builtins__")]
        out = []
        for k in self._page(keys, start, count):
            try:
                out.append(self.variable(str(k), mapping[k], str(k)))
            except Exception as e:
                out.append({"name": str(k), "value": f"<unavailable: {e}>", "variablesReference": 0})
        return out

    def _object(self, v, ev, filter_, start, count):
        out = []
        indexed, named = self.child_counts(v)
        if filter_ != "indexed":
            for name, x, kind in self._named_children(v):
                if kind == "members":
                    out.append(self._members_group(v, ev, name))
                elif kind == "group":
                    var = {"name": name, "value": f"({len(x)} items)", "variablesReference": self.new_ref(("group", x)),
                           "namedVariables": len(x), "presentationHint": {"kind": "virtual"}}
                    out.append(var)
                else:
                    out.append(self.variable(name, x, f"{ev}.{name}" if ev and kind == "attr" else None))
        if filter_ != "named" and indexed:
            if not count and not filter_:
                count = DEFAULT_PAGE
            out.extend(self._indexed(v, ev, start or 0, count or indexed))
        return out

    def _named_children(self, v):
        if is_tensor_like(v):
            out = []
            for a in ("shape", "dtype", "device", "requires_grad"):
                try:
                    x = getattr(v, a)
                except Exception as e:
                    x = f"<{type(e).__name__}>"
                out.append((a, tuple(x) if a == "shape" else x, "meta"))
            return out
        if is_module_like(v):
            return [(g, None, "members") for g in ("parameters", "buffers", "children")]
        if isinstance(v, (str, bytes, bytearray, list, tuple, dict, set, frozenset)) or type(v).__name__ == "deque":
            return []
        return self._named(v)

    def _members_group(self, m, ev, which):
        """A module's 'parameters', 'buffers' (recursive, by qualified name) or 'children' group:
        indexed, so a client pages a big model's thousands of tensors."""
        try:
            mm = self.members(m)
        except Exception as e:
            return {"name": which, "value": f"<unavailable: {type(e).__name__}: {e}>", "variablesReference": 0}
        n = mm.count[which]
        if which == "children":
            value = f"{mm.children_text()} module{'' if n == 1 and mm.children_complete else 's'}"
        else:
            value = mm.text(which)
            if not mm.complete:
                value += f" (counting stopped after {MEMBERS_LIMIT_S:g} s)"
        var = {"name": which, "value": value, "variablesReference": 0, "presentationHint": {"kind": "virtual"}}
        if n:
            var["variablesReference"] = self.new_ref(("members", m, which, ev))
            var["indexedVariables"] = n
        return var

    def _module_members(self, prov, filter_, start, count):
        _, m, which, ev = prov
        if filter_ == "named":
            return []
        if not count and not filter_:
            count = DEFAULT_PAGE
        start = max(0, start or 0)
        stop = start + count if count else 1 << 62
        page = ModuleMembers(m, (which, start, stop), limit=MEMBERS_LIMIT_S * 4).items
        return [self.variable(name, x, _member_expression(ev, name) if ev else None) for name, x in page]

    def _indexed(self, v, ev, start, count):
        out = []
        end = start + count
        if is_tensor_like(v):
            n = int(tuple(v.shape)[0]) if tuple(v.shape) else 0
            for i in range(start, min(end, n)):
                out.append(self.variable(f"[{i}]", v[i], f"{ev}[{i}]" if ev else None))
            return out
        if isinstance(v, dict):
            keys = list(v)[start:end]
            for k in keys:
                name = self.safe_repr(k)
                out.append(self.variable(name, v[k], f"{ev}[{name}]" if ev else None))
            return out
        if isinstance(v, (set, frozenset)):
            import itertools
            for i, x in enumerate(itertools.islice(v, start, end), start):
                out.append(self.variable(f"[{i}]", x, None))
            return out
        if type(v).__name__ == "deque":
            import itertools
            for i, x in enumerate(itertools.islice(v, start, end), start):
                out.append(self.variable(f"[{i}]", x, f"{ev}[{i}]" if ev else None))
            return out
        for i, x in enumerate(v[start:end], start):
            out.append(self.variable(f"[{i}]", x, f"{ev}[{i}]" if ev else None))
        return out
