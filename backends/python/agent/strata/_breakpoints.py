"""Breakpoint model: parsing of conditions, hit conditions and log messages; line resolution."""
import os

KIND_SLOW, KIND_CONDITION, KIND_LOG, KIND_LOG_NAMES = 0, 1, 2, 3

_HIT_OPS = (">=", "<=", "==", ">", "<", "%")


def parse_hit_condition(text):
    """'5' (the 5th hit only), '==5', '>=5', '>5', '<5', '<=5', '%5' -> (op, n)."""
    s = str(text).strip()
    op = "=="
    for candidate in _HIT_OPS:
        if s.startswith(candidate):
            op, s = candidate, s[len(candidate):].strip()
            break
    try:
        n = int(s)
    except ValueError:
        raise ValueError(f"invalid hit condition {text!r}: expected N, ==N, >=N, >N, <N, <=N or %N") from None
    if op == "%" and n <= 0:
        raise ValueError(f"invalid hit condition {text!r}: %N needs N > 0")
    return op, n


def hit_matches(op, n, hits):
    if op == "==":
        return hits == n
    if op == ">=":
        return hits >= n
    if op == ">":
        return hits > n
    if op == "<":
        return hits < n
    if op == "<=":
        return hits <= n
    return hits % n == 0


def parse_log_message(text):
    """Splits 'x={x} {{literal}}' into literal strings and (expression source,) tuples."""
    parts, lit, i, n = [], [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "{":
            if i + 1 < n and text[i + 1] == "{":
                lit.append("{")
                i += 2
                continue
            depth, j, quote = 1, i + 1, None
            while j < n:
                d = text[j]
                if quote:
                    if d == quote:
                        quote = None
                elif d in "'\"":
                    quote = d
                elif d in "{[(":
                    depth += 1
                elif d in "}])":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n or text[j] != "}":
                raise ValueError(f"unmatched '{{' at column {i + 1} in log message")
            expr = text[i + 1:j]
            if not expr.strip():
                raise ValueError(f"empty expression at column {i + 1} in log message")
            if lit:
                parts.append("".join(lit))
                lit = []
            parts.append((expr,))
            i = j + 1
        elif c == "}":
            if i + 1 < n and text[i + 1] == "}":
                lit.append("}")
                i += 2
                continue
            raise ValueError(f"single '}}' at column {i + 1} in log message")
        else:
            lit.append(c)
            i += 1
    if lit:
        parts.append("".join(lit))
    return parts


def _fstring_source(parts):
    """An f-string whose literals come from default parameters, so no escaping is needed."""
    pieces, defaults = [], {}
    for p in parts:
        if isinstance(p, tuple):
            pieces.append("{" + p[0] + "}")
        else:
            name = f"_strata_l{len(defaults)}"
            defaults[name] = p
            pieces.append("{" + name + "}")
    return "f'" + "".join(pieces) + "'", defaults


def _names_of(code, out):
    out.update(code.co_names)
    out.update(code.co_freevars)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            _names_of(c, out)
    return out


def _compile_error(what, e):
    if isinstance(e, SyntaxError):
        return f"{what}: {e.msg}"
    return f"{what}: {e}"


class Breakpoint:
    _next_id = 1

    def __init__(self, path, line, condition=None, hit_condition=None, log_message=None,
                 func_name=None):
        self.id = Breakpoint._next_id
        Breakpoint._next_id += 1
        self.path = path
        self.requested_line = line
        self.line = line
        self.func_name = func_name
        self.condition = condition or None
        self.hit_condition = hit_condition or None
        self.log_message = log_message
        self.verified = False
        self.message = None
        self.hits = 0
        self.cond_code = None
        self.hit = None
        self.log_parts = None
        self.log_src = None
        self.log_defaults = None
        self.log_code = None
        self.piece_codes = None
        self.error = None
        self._compile()

    def _compile(self):
        try:
            if self.condition:
                self.cond_code = compile(self.condition, "<condition>", "eval")
        except Exception as e:
            self.error = _compile_error("condition", e)
            return
        try:
            if self.hit_condition:
                self.hit = parse_hit_condition(self.hit_condition)
        except ValueError as e:
            self.error = str(e)
            return
        if self.log_message is not None:
            try:
                self.log_parts = parse_log_message(self.log_message)
                self.log_src, self.log_defaults = _fstring_source(self.log_parts)
                self.log_code = compile(self.log_src, "<log message>", "eval")
                self.piece_codes = [compile("f'{" + p[0] + "}'", "<log message>", "eval")
                                    if isinstance(p, tuple) else p for p in self.log_parts]
            except Exception as e:
                self.error = _compile_error("log message", e)

    @property
    def kind(self):
        if self.log_code is not None and not self.cond_code and not self.hit:
            return KIND_LOG
        if self.cond_code is not None and not self.hit and self.log_code is None:
            return KIND_CONDITION
        return KIND_SLOW

    def make_entry(self, code, globals_):
        """(kind, fn, argnames, bp) for the C table; fn reads the frame's locals as args."""
        kind = self.kind
        if kind == KIND_SLOW or globals_ is None:
            return (KIND_SLOW, None, (), self)
        # Class bodies look names up in a dict at run time, which a lambda cannot mirror.
        if not (code.co_flags & 1) and code.co_name != "<module>":
            return (KIND_SLOW, None, (), self)
        src_code = self.cond_code if kind == KIND_CONDITION else self.log_code
        local_names = set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)
        if code.co_name == "<module>":
            local_names = set()
        args = tuple(sorted(n for n in _names_of(src_code, set()) if n in local_names))
        if kind == KIND_LOG and code.co_name != "<module>":
            names = [p[0].strip() for p in self.log_parts if isinstance(p, tuple)]
            if all(n.isidentifier() and n in local_names for n in names):
                flat, want_literal = [], True
                for p in self.log_parts:
                    is_name = isinstance(p, tuple)
                    if is_name == want_literal:
                        flat.append("")
                    flat.append(p[0].strip() if is_name else p)
                    want_literal = is_name
                if want_literal:
                    flat.append("")
                return (KIND_LOG_NAMES, tuple(flat), (), self)
        body = f"({self.condition})" if kind == KIND_CONDITION else self.log_src
        defaults = {} if kind == KIND_CONDITION else dict(self.log_defaults)
        params = list(args) + [f"{k}={k}" for k in defaults]
        try:
            fn = eval(f"lambda {', '.join(params)}: {body}", globals_, defaults)
        except Exception:
            return (KIND_SLOW, None, (), self)
        return (kind, fn, args, self)

    def count_hit(self):
        """Counts a hit (condition already true) and says whether it should act."""
        self.hits += 1
        if self.hit is None:
            return True
        return hit_matches(self.hit[0], self.hit[1], self.hits)

    def format_log(self, frame):
        out = []
        for p in self.piece_codes:
            if isinstance(p, str):
                out.append(p)
                continue
            try:
                out.append(eval(p, frame.f_globals, frame.f_locals))
            except Exception as e:
                out.append(f"<error: {type(e).__name__}: {e}>")
        return "".join(out)

    def to_dap(self):
        d = {"id": self.id, "verified": self.verified}
        if self.line is not None and self.path is not None:
            d["line"] = self.line
            d["source"] = {"path": self.path}
        if self.message:
            d["message"] = self.message
        return d


def canon(path):
    if path.startswith("<"):
        return path
    return os.path.normcase(os.path.abspath(path))


_lines_cache = {}


def executable_lines(path):
    """Lines that carry code in a source file (every nested code object), or raises."""
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    hit = _lines_cache.get(path)
    if hit and hit[0] == key:
        return hit[1]
    with open(path, "rb") as f:
        src = f.read()
    code = compile(src, path, "exec", dont_inherit=True)
    lines = set()
    stack = [code]
    while stack:
        c = stack.pop()
        for _, _, ln in c.co_lines():
            if ln is not None:
                lines.add(ln)
        stack.extend(k for k in c.co_consts if hasattr(k, "co_lines"))
    lines.discard(0)
    _lines_cache[path] = (key, lines)
    return lines


def resolve_line(path, line, source_text=None):
    """(resolved line or None, message) for a requested breakpoint line."""
    try:
        if source_text is not None:
            code = compile(source_text, path, "exec", dont_inherit=True)
            lines, stack = set(), [code]
            while stack:
                c = stack.pop()
                lines.update(ln for _, _, ln in c.co_lines() if ln)
                stack.extend(k for k in c.co_consts if hasattr(k, "co_lines"))
        else:
            lines = executable_lines(path)
    except FileNotFoundError:
        return None, f"file not found: {path}"
    except SyntaxError as e:
        return None, f"cannot parse {os.path.basename(path)}: {e.msg} (line {e.lineno})"
    except (OSError, ValueError) as e:
        return None, f"cannot read {path}: {e}"
    if line in lines:
        return line, None
    later = [ln for ln in lines if ln > line]
    if not later:
        return None, f"no code at or after line {line}"
    return min(later), None


def qualname(code, frame=None):
    """co_qualname (3.11+). 3.10 has the name alone: a method's class is found from the frame's
    first argument (self or cls), as the class along its MRO whose attribute runs this code."""
    q = getattr(code, "co_qualname", None)
    if q is not None:
        return q
    name = code.co_name
    if frame is None or not code.co_argcount:
        return name
    try:
        obj = frame.f_locals.get(code.co_varnames[0])
        klass = obj if isinstance(obj, type) else type(obj)
        for k in klass.__mro__:
            attr = k.__dict__.get(name)
            fn = getattr(attr, "fget", None) or getattr(attr, "__func__", None) or attr
            if getattr(fn, "__code__", None) is code:
                return f"{k.__qualname__}.{name}"
    except Exception:
        pass
    return name


def code_lines(code):
    """The lines of one code object, without its nested ones."""
    return {ln for _, _, ln in code.co_lines() if ln}


def func_bp_matches(name, code, module_name, frame=None):
    q = qualname(code, frame)
    if name == q or name == f"{module_name}.{q}":
        return True
    # 'outer.inner' also names outer.<locals>.inner.
    plain = q.replace(".<locals>", "")
    return name == plain or name == f"{module_name}.{plain}"
