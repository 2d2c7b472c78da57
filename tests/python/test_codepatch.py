"""Breakpoints written into code on CPython 3.11 (strata/_codepatch.py): the rewrite itself
against CPython's own tracing, and the agent driving it through DAP."""
import contextlib
import gc
import importlib
import io
import os
import sys
import tempfile
import types

from agent_case import AgentCase, unittest
from dap_client import markers, target

from strata import _codepatch as cp

ONLY_311 = unittest.skipUnless(cp.SUPPORTED, "breakpoints are written into code on CPython 3.11 only")


def lines_of(code):
    return {ln for _, _, ln in code.co_lines() if ln}


def code_tree(code):
    """`code` and every code object nested in it, outermost first."""
    out = [code]
    for k in code.co_consts:
        if isinstance(k, types.CodeType):
            out += code_tree(k)
    return out


def patch_tree(code, hook, done):
    """`code` and its nested code with a call at every line."""
    if code in done:
        return done[code]
    consts = [patch_tree(k, hook, done) if isinstance(k, types.CodeType) else k for k in code.co_consts]
    new = cp.rewrite(code, lines_of(code), hook, consts)
    if new is None:
        raise AssertionError(f"no rewrite for {code.co_name} ({code.co_filename}:{code.co_firstlineno})")
    done[code] = new
    return new


# ---- sample code: every shape of control flow the rewrite has to keep -----------------------
def s_loops(n):
    acc = 0
    for i in range(n):
        acc += i
    while acc > 3:
        acc -= 3
    while n: n -= 1  # noqa: E701
    return acc


def s_try(x):
    try:
        y = 1 / x
    except ZeroDivisionError:
        y = 0
    else:
        y += 1
    finally:
        z = 2
    return y, z


def s_with_calls(a):
    out = []
    with contextlib.suppress(KeyError):
        out.append(dict(
            key=a,
            other=[a,
                   a]))
        {}["missing"]
    out.append(sorted([3, 1, 2], key=lambda v: -v, reverse=False))
    return out if a else None


def s_comprehensions(xs):
    return [x * 2
            for x in xs
            if x], {k: v for k, v in zip(xs, xs)}, sum(x for x in xs)


def s_generator(n):
    for i in range(n):
        yield i
        if i == 2:
            break
    yield from range(2)


async def s_coroutine(n):
    total = 0
    for i in range(n):
        total += await s_awaitable(i)
    return total


async def s_awaitable(i):
    return i * 2


def s_match(v):
    match v:
        case [a, b]:
            return a + b
        case {"k": k}:
            return k
        case _:
            return None


def s_closure(n):
    def inner(k):
        nonlocal n
        n += k
        return n
    return [inner(i) for i in range(3)]


def s_raise(n):
    for i in range(n):
        try:
            if i % 2:
                raise ValueError(i)
        except ValueError as e:
            if str(e) == "3":
                raise
    return n


def run_all():
    out = [s_loops(10), s_try(0), s_try(2), s_with_calls(1), s_with_calls(0), s_comprehensions([1, 0, 2]),
           list(s_generator(5)), s_match([1, 2]), s_match({"k": 5}), s_match(3), s_closure(1)]
    c = s_coroutine(4)
    try:
        c.send(None)
    except StopIteration as e:
        out.append(e.value)
    try:
        s_raise(5)
    except ValueError as e:
        out.append(str(e))
    return out


# A function whose jumps need EXTENDED_ARG once calls are written in.
BIG = ("def big(n):\n    t = 0\n" + "".join(f"    if n > {i}:\n        t += {i}\n" for i in range(150))
       + "    for i in range(n):\n" + "".join(f"        t += i * {i}\n" for i in range(90)) + "    return t\n")
exec(BIG)


def traced(fn, wanted):
    """fn()'s result, and the LINE events tracing reports in code that `wanted(code)` accepts."""
    seen = []

    def trace(frame, event, arg):
        if wanted(frame.f_code):
            if event == "line":
                seen.append((frame.f_code.co_name, frame.f_lineno))
            return trace
        return None
    sys.settrace(trace)
    try:
        result = fn()
    finally:
        sys.settrace(None)
    return result, seen


class HitRecorder:
    def __init__(self):
        self.hits = []

    def __call__(self, line):
        self.hits.append((sys._getframe(1).f_code.co_name, line))


@ONLY_311
class Rewrite(unittest.TestCase):
    def patched_functions(self, functions, hook):
        done = {}
        saved = []
        for f in functions:
            saved.append((f, f.__code__))
            f.__code__ = patch_tree(f.__code__, hook, done)
        return saved

    def test_calls_come_where_tracing_reports_lines(self):
        samples = [v for k, v in globals().items() if k.startswith("s_") or k == "big"]
        codes = {c for f in samples for c in code_tree(f.__code__)}
        plain = run_all() + [big(200)]
        want, lines = traced(lambda: run_all() + [big(200)], lambda c: c in codes)
        self.assertEqual(plain, want)
        rec = HitRecorder()
        saved = self.patched_functions(samples, rec)
        try:
            got = run_all() + [big(200)]
        finally:
            for f, code in saved:
                f.__code__ = code
        self.assertEqual(got, plain)
        self.assertEqual(rec.hits, lines)
        self.assertGreater(len(rec.hits), 400)

    def test_stdlib_modules_run_the_same_with_a_call_at_every_line(self):
        import argparse
        import difflib
        import fractions
        import ipaddress
        import json.decoder
        import json.encoder
        import pprint
        import shlex
        import statistics
        import string
        import textwrap
        mods = [textwrap, difflib, argparse, statistics, fractions, json.encoder, json.decoder, string,
                pprint, shlex, ipaddress]
        files = {m.__file__ for m in mods}

        def work():
            out = [textwrap.fill("hello world " * 50, width=37), textwrap.dedent("   a\n    b\n"),
                   list(difflib.unified_diff(["a\n", "b\n", "c\n"] * 20, ["a\n", "x\n", "c\n"] * 20))]
            p = argparse.ArgumentParser()
            p.add_argument("--x", type=int, default=3)
            p.add_argument("ys", nargs="*")
            out.append(vars(p.parse_args(["--x", "5", "a", "b"])))
            with contextlib.redirect_stderr(io.StringIO()):
                try:
                    p.parse_args(["--x", "q"])
                except SystemExit as e:
                    out.append(("exit", e.code))
            out += [statistics.median([3, 1, 2, 5]), statistics.stdev([1.0, 2.0, 4.0]),
                    str(fractions.Fraction(3, 9) + fractions.Fraction("1/7")),
                    json.encoder.py_encode_basestring_ascii("h\u00e9llo"),
                    json.decoder.py_scanstring('abc\\n"', 0), string.Template("$a-$b").substitute(a=1, b=2),
                    pprint.pformat({"k": list(range(30)), "z": {"y": [1, 2, {"q": 3}]}}),
                    shlex.split("a 'b c' \"d e\" f\\ g"),
                    [str(x) for x in ipaddress.ip_network("10.0.0.0/29").hosts()]]
            return out
        plain = work()
        want, lines = traced(work, lambda c: c.co_filename in files)
        self.assertEqual(want, plain)
        rec = HitRecorder()
        funcs = [o for o in gc.get_objects() if type(o) is types.FunctionType and o.__code__.co_filename in files]
        saved = self.patched_functions(funcs, rec)
        try:
            got = work()
        finally:
            for f, code in saved:
                f.__code__ = code
        self.assertEqual(got, plain)
        self.assertGreater(len(funcs), 300)
        self.assertEqual(len(rec.hits), len(lines))
        self.assertEqual(rec.hits, lines)

    def test_every_code_object_of_many_modules_rewrites_and_keeps_its_instructions(self):
        names = ("json argparse difflib email.parser http.client urllib.parse collections asyncio.base_events "
                 "asyncio.tasks dataclasses enum typing inspect ast tokenize logging pathlib zipfile tarfile "
                 "unittest.case pickle decimal statistics configparser subprocess threading shutil tempfile "
                 "traceback dis").split()
        codes = []
        for name in names:
            path = importlib.import_module(name).__file__
            with open(path, encoding="utf-8") as f:
                codes += code_tree(compile(f.read(), path, "exec"))
        self.assertGreater(len(codes), 3000)
        for code in codes:
            new = cp.rewrite(code, lines_of(code), print)
            self.assertIsNotNone(new, f"{code.co_filename}:{code.co_firstlineno} {code.co_name}")
            # The original instructions in order, a call (PUSH_NULL, LOAD_CONST hook, LOAD_CONST
            # line, PRECALL, CALL, POP_TOP) in front of each planned one, a jump over it where a
            # fall-through from the same line must not make it; every jump lands where it did.
            old_ins, _ = cp._decode(code)
            first, blocks, past, covered, by_start = cp._plan(old_ins, lines_of(code))
            new_ins, _ = cp._decode(new)
            want_ops, index = [], {}
            for k, x in enumerate(old_ins):
                if k in blocks:
                    if blocks[k]:
                        want_ops.append(cp.JUMP_FORWARD)
                    index[("b", k)] = len(want_ops)
                    want_ops += [cp.PUSH_NULL, cp.LOAD_CONST, cp.LOAD_CONST, cp.PRECALL, cp.CALL, cp.POP_TOP]
                index[("i", k)] = len(want_ops)
                want_ops.append(x.op)
            where = f"{code.co_filename}:{code.co_firstlineno} {code.co_name}"
            self.assertEqual([x.op for x in new_ins], want_ops, where)
            new_at = {x.start: i for i, x in enumerate(new_ins)}
            for k, x in enumerate(old_ins):
                y = new_ins[index[("i", k)]]
                if x.target is None:
                    self.assertEqual(y.arg, x.arg, where)
                    continue
                t = by_start[x.target]
                dest = index[("b", t)] if t in blocks and k not in past else index[("i", t)]
                self.assertEqual(new_at[y.target], dest, where)
            for (kind, k), i in index.items():
                if kind == "b":
                    self.assertIs(new.co_consts[new_ins[i + 1].arg], print)
                    self.assertEqual(new.co_consts[new_ins[i + 2].arg], old_ins[k].line)

    def test_tables_encode_as_cpython_reads_them(self):
        for code in (s_try.__code__, s_raise.__code__, big.__code__):
            self.assertEqual(cp.encode_exception_table(cp.parse_exception_table(code.co_exceptiontable)),
                             code.co_exceptiontable)
            pos = list(code.co_positions())
            again = code.replace(co_linetable=cp.encode_locations(pos, code.co_firstlineno))
            self.assertEqual(list(again.co_positions()), pos)

    def test_no_call_before_resume_or_between_a_call_and_its_names(self):
        rec = HitRecorder()
        new = cp.rewrite(s_with_calls.__code__, lines_of(s_with_calls.__code__), rec)
        ins, _ = cp._decode(new)
        first = next(k for k, x in enumerate(ins) if x.op == cp.RESUME)
        self.assertFalse(any(x.op == cp.LOAD_CONST and x.arg >= len(s_with_calls.__code__.co_consts)
                             for x in ins[:first]))
        for k, x in enumerate(ins):
            if x.op == cp.KW_NAMES:
                self.assertEqual(ins[k + 1].op, cp.PRECALL)


@ONLY_311
class ThroughTheAgent(AgentCase):
    """The agent on 3.11 with breakpoints written into code: stops, conditions, steps, and no
    frame hook or tracing where no frame needs it."""

    def output(self):
        self.c.wait_event("exited")
        rc, out, err = self.finish()
        self.assertEqual(rc, 0, err)
        return out

    def test_never_called_function_leaves_the_program_untraced(self):
        self.start("patched_code.py")
        self.set_bps("never")
        self.go()
        text = self.output()
        self.assertIn("state hooked=False everywhere=False", text)
        self.assertIn("acc 66", text)
        self.assertEqual(self.c.take_events("stopped"), [])

    def test_stops_conditions_steps_and_later_modules(self):
        self.start("patched_code.py")
        helper = target("late_helper.py")
        later = target("later_helper.py")
        self.set_bps({"at": "work", "condition": "i == 3"}, "closure", "gen_after")
        self.c.request("setBreakpoints", source={"path": helper}, breakpoints=[{"line": markers(helper)["helper"]}])
        self.c.request("setBreakpoints", source={"path": later},
                       breakpoints=[{"line": markers(later)["later"]}, {"line": markers(later)["later_body"]}])
        self.go()
        # The module body of later_helper has a breakpoint of its own: it is traced, the rest not.
        ev, top = self.stopped("breakpoint")
        self.assertEqual(top["line"], self.m["work"])
        self.assertEqual(self.locals_()["i"]["value"], "3")
        self.c.request("next", threadId=self.tid)
        ev, top = self.stopped("step")
        self.assertEqual(top["line"], self.m["work"] + 1)
        self.assertEqual(self.locals_()["total"]["value"], "6")
        self.cont()
        ev, top = self.stopped("breakpoint")
        self.assertEqual(top["line"], self.m["closure"])
        self.assertEqual(self.locals_()["k"]["value"], "1")
        self.cont()
        for i in range(3):
            ev, top = self.stopped("breakpoint")
            self.assertEqual(top["line"], self.m["gen_after"])
            self.assertEqual(self.locals_()["i"]["value"], str(i))
            self.cont()
        ev, top = self.stopped("breakpoint")
        self.assertEqual((top["source"]["path"], top["line"]), (helper, markers(helper)["helper"]))
        self.cont()
        ev, top = self.stopped("breakpoint")
        self.assertEqual((top["source"]["path"], top["line"]), (later, markers(later)["later_body"]))
        self.cont()
        ev, top = self.stopped("breakpoint")
        self.assertEqual((top["source"]["path"], top["line"]), (later, markers(later)["later"]))
        self.assertEqual(self.locals_()["x"]["value"], "5")
        self.cont()
        self.assertIn("acc 66", self.output())

    def test_breakpoints_set_while_running_reach_loaded_code_and_go_when_cleared(self):
        flag = os.path.join(tempfile.mkdtemp(), "go")
        self.start("patched_code.py", "wait", flag)
        self.go()
        import time
        deadline = time.monotonic() + 15
        while not os.path.exists(flag + ".ready") and time.monotonic() < deadline:
            time.sleep(0.02)
        helper = target("late_helper.py")
        # Set while the program waits: late_helper is loaded, main() runs (its loop line is
        # armed through events), work() and helper() are patched.
        self.set_bps("loop", "work")
        self.c.request("setBreakpoints", source={"path": helper}, breakpoints=[{"line": markers(helper)["helper"]}])
        open(flag, "w").close()
        ev, top = self.stopped("breakpoint")
        self.assertEqual(top["line"], self.m["loop"])
        self.cont()
        ev, top = self.stopped("breakpoint")
        self.assertEqual(top["line"], self.m["work"])
        self.assertEqual(self.locals_()["i"]["value"], "0")
        # Cleared while stopped: the loop in main() goes on without stopping; work() and helper()
        # get their own code back.
        self.set_bps()
        self.c.request("setBreakpoints", source={"path": helper}, breakpoints=[])
        self.cont()
        text = self.output()
        self.assertIn("restored True", text)
        self.assertIn("acc 66", text)
        self.assertEqual(self.c.take_events("stopped"), [])


if __name__ == "__main__":
    unittest.main()
