"""Evaluate, setVariable, setExpression and completions in the context of a stopped frame."""
import builtins
import sys

_PY313 = sys.version_info >= (3, 13)


def _sync_locals(core, frame):
    if not _PY313 and frame is not None:
        core.locals_to_fast(frame)


def _namespaces(frame):
    if frame is None:
        main = sys.modules.get("__main__")
        g = vars(main) if main else {}
        return g, g
    return frame.f_globals, frame.f_locals


def evaluate(core, frame, expression, context):
    """(value, is_statement). Statements are accepted in the repl context only."""
    g, loc = _namespaces(frame)
    try:
        code = compile(expression, "<debug>", "eval")
    except SyntaxError:
        if context != "repl":
            raise
        code = compile(expression, "<debug>", "exec")
        exec(code, g, loc)
        if loc is not g:
            _sync_locals(core, frame)
        return None, True
    value = eval(code, g, loc)
    if context == "repl" and loc is not g:
        _sync_locals(core, frame)
    return value, False


def assign(core, frame, target_expression, value):
    g, loc = _namespaces(frame)
    name = target_expression.strip()
    if name.isidentifier():
        loc[name] = value
        if loc is not g:
            _sync_locals(core, frame)
        return
    # Attribute and item targets mutate objects, so a scratch namespace is enough.
    tmp = "__strata_assign_value"
    scope = dict(loc)
    scope[tmp] = value
    exec(compile(f"{target_expression} = {tmp}", "<debug>", "exec"), g, scope)


def set_child(core, provider, name, value):
    """Assigns a child named as in a variables response; returns the new value."""
    kind = provider[0]
    if kind == "scope":
        _, which, frame = provider
        if which == "globals":
            frame.f_globals[name] = value
        else:
            frame.f_locals[name] = value
            _sync_locals(core, frame)
        return value
    if kind != "obj":
        raise ValueError("this variable cannot be set")
    obj = provider[1]
    if name.startswith("[") and name.endswith("]") and not isinstance(obj, dict):
        obj[int(name[1:-1])] = value
    elif isinstance(obj, dict):
        for k in obj:
            if repr(k) == name:
                obj[k] = value
                break
        else:
            raise KeyError(name)
    else:
        setattr(obj, name, value)
    return value


def _kind(v):
    if isinstance(v, type):
        return "class"
    if callable(v):
        return "function"
    if type(v).__name__ == "module":
        return "module"
    return "variable"


def completions(frame, text, column, columns_start_at_1=True):
    pos = column - 1 if columns_start_at_1 else column
    pos = max(0, min(len(text), pos))
    head = text[:pos]
    i = pos
    while i > 0 and (head[i - 1].isalnum() or head[i - 1] in "_."):
        i -= 1
    word = head[i:]
    g, loc = _namespaces(frame)
    if "." in word:
        base, _, partial = word.rpartition(".")
        try:
            obj = eval(compile(base, "<completion>", "eval"), g, loc)
            names = dir(obj)
        except Exception:
            return []
        items = [(n, _kind_safe(obj, n)) for n in names if n.startswith(partial)]
    else:
        partial = word
        seen = {}
        for ns in (loc, g, vars(builtins)):
            for n in list(ns):
                if isinstance(n, str) and n.startswith(partial) and n not in seen:
                    seen[n] = _kind(ns[n])
        import keyword
        for k in keyword.kwlist:
            if k.startswith(partial) and k not in seen:
                seen[k] = "keyword"
        items = sorted(seen.items())
    start = pos - len(partial) + (1 if columns_start_at_1 else 0)
    return [{"label": n, "type": t, "start": start, "length": len(partial)}
            for n, t in items if not n.startswith("__") or partial.startswith("_")]


def _kind_safe(obj, name):
    try:
        return _kind(getattr(type(obj), name, None) or getattr(obj, name))
    except Exception:
        return "property"
