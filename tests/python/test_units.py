"""Unit tests: hit-condition and log-message parsing, line resolution, exception tables."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "backends", "python", "agent"))
from dap_client import agent_pythonpath  # noqa: E402

sys.path.insert(0, agent_pythonpath())
from strata import _breakpoints as bp  # noqa: E402
from strata import _exceptions as ex  # noqa: E402
from strata import _sources as src  # noqa: E402


class HitConditionTest(unittest.TestCase):
    def test_forms(self):
        self.assertEqual(bp.parse_hit_condition("5"), ("==", 5))
        self.assertEqual(bp.parse_hit_condition("==5"), ("==", 5))
        self.assertEqual(bp.parse_hit_condition(">= 3"), (">=", 3))
        self.assertEqual(bp.parse_hit_condition(">3"), (">", 3))
        self.assertEqual(bp.parse_hit_condition("%4"), ("%", 4))
        self.assertEqual(bp.parse_hit_condition("<2"), ("<", 2))

    def test_matching(self):
        hits = [n for n in range(1, 13) if bp.hit_matches("%", 4, n)]
        self.assertEqual(hits, [4, 8, 12])
        self.assertEqual([n for n in range(1, 8) if bp.hit_matches("==", 5, n)], [5])
        self.assertEqual([n for n in range(1, 8) if bp.hit_matches(">", 5, n)], [6, 7])

    def test_errors(self):
        for bad in ("", "five", "=>5", "%0", "5x"):
            with self.assertRaises(ValueError, msg=bad):
                bp.parse_hit_condition(bad)


class LogMessageTest(unittest.TestCase):
    def test_parts(self):
        self.assertEqual(bp.parse_log_message("x={x} y={y + 1}!"),
                         ["x=", ("x",), " y=", ("y + 1",), "!"])
        self.assertEqual(bp.parse_log_message("{{literal}} {d['a}']}"),
                         ["{literal} ", ("d['a}']",)])
        self.assertEqual(bp.parse_log_message("{ {1: 2}[1] }"), [(" {1: 2}[1] ",)])

    def test_errors(self):
        for bad in ("open {x", "close } here", "empty {}"):
            with self.assertRaises(ValueError, msg=bad):
                bp.parse_log_message(bad)

    def test_syntax_error_makes_breakpoint_unverified(self):
        b = bp.Breakpoint("/x.py", 1, log_message="v={1 +}")
        self.assertIn("log message", b.error)
        b = bp.Breakpoint("/x.py", 1, condition="a ==")
        self.assertIn("condition", b.error)
        b = bp.Breakpoint("/x.py", 1, hit_condition="lots")
        self.assertIn("hit condition", b.error)

    def test_compiled_log_function(self):
        def sample(a, b):
            return a + b
        b = bp.Breakpoint("/x.py", 1, log_message="a={a} b={b!r} quote=' brace={{ \\n")
        kind, fn, args, _ = b.make_entry(sample.__code__, {})
        self.assertEqual(kind, bp.KIND_LOG)
        self.assertEqual(args, ("a", "b"))
        self.assertEqual(fn(1, "s"), "a=1 b='s' quote=' brace={ \\n")

    def test_plain_names_format_without_python(self):
        def sample(a, b):
            return a + b
        b = bp.Breakpoint("/x.py", 1, log_message="{a} and {b}!")
        kind, parts, args, _ = b.make_entry(sample.__code__, {})
        self.assertEqual(kind, bp.KIND_LOG_NAMES)
        self.assertEqual(parts, ("", "a", " and ", "b", "!"))
        b = bp.Breakpoint("/x.py", 1, log_message="x{a}{b}")
        self.assertEqual(b.make_entry(sample.__code__, {})[1], ("x", "a", "", "b", ""))

    def test_compiled_condition(self):
        def sample(a):
            return a
        b = bp.Breakpoint("/x.py", 1, condition="a > limit")
        kind, fn, args, _ = b.make_entry(sample.__code__, {"limit": 3})
        self.assertEqual((kind, args), (bp.KIND_CONDITION, ("a",)))
        self.assertTrue(fn(4))
        self.assertFalse(fn(2))


class LinkCodecTest(unittest.TestCase):
    def test_round_trip_and_errors(self):
        from strata import _link
        msg = {"seq": 1, "type": "event", "body": {"t": "é\n\"", "n": [1, 2.5, None, True]}}
        self.assertEqual(_link.loads(_link.dumps(msg).encode()), msg)
        self.assertEqual(_link.dumps({"o": object}), '{"o":"<class \'object\'>"}')
        for bad in (b"{oops", b"[1,", b"1 2", b""):
            with self.assertRaises(ValueError, msg=bad):
                _link.loads(bad)


class LineResolutionTest(unittest.TestCase):
    def test_moves_to_next_line_or_reports(self):
        src = "x = 1\n\n# comment\ny = 2\n"
        self.assertEqual(bp.resolve_line("<t>", 1, src), (1, None))
        self.assertEqual(bp.resolve_line("<t>", 2, src), (4, None))
        line, msg = bp.resolve_line("<t>", 9, src)
        self.assertIsNone(line)
        self.assertIn("no code", msg)
        line, msg = bp.resolve_line("/does/not/exist.py", 3)
        self.assertIsNone(line)
        self.assertIn("not found", msg)


class ExceptionTableTest(unittest.TestCase):
    def test_catcher_detection(self):
        def catches():
            try:
                return sys._getframe()
            except KeyError:
                pass

        def finally_only():
            try:
                return sys._getframe()
            finally:
                pass
        f = catches()
        self.assertTrue(ex.exception_table(f.f_code))
        self.assertEqual(ex.parse_type_condition("ValueError, KeyError"), {"ValueError", "KeyError"})
        self.assertTrue(ex.type_matches(KeyError, {"LookupError"}))
        self.assertFalse(ex.type_matches(ValueError, {"KeyError"}))


class SourcesTest(unittest.TestCase):
    """The agent's own source reader must give what linecache gives, without importing it."""

    def write(self, name, data):
        import tempfile
        d = tempfile.mkdtemp(prefix="strata-src-")
        self.addCleanup(__import__("shutil").rmtree, d)
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(data)
        return d, path

    def test_same_as_linecache(self):
        import linecache
        cases = [
            b"# -*- coding: latin-1 -*-\nname = '\xe9'\n",
            b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '\x80'\n",
            b"\xef\xbb\xbfx = '\xc3\xa9'\r\ny = 2\r\n",
            b"a = 1\rb = 2\r",
            b"x = 1\n\x0cy = 2\nno_newline = 3",
            "s = '\u2028 inside'\n".encode(),
        ]
        for i, data in enumerate(cases):
            _, path = self.write(f"case{i}.py", data)
            with self.subTest(data=data):
                self.assertEqual(src._read(path), linecache.getlines(path))

    def test_cookie_below_code_is_not_one(self):
        _, path = self.write("late.py", b"x = 1\n# coding: latin-1\ny = '\xc3\xa9'\n")
        self.assertEqual(src._read(path)[2], "y = '\u00e9'\n")

    def test_undecodable_and_missing_give_nothing(self):
        _, path = self.write("bad.py", b"x = '\xff'\n")
        self.assertEqual(src._read(path), [])
        self.assertEqual(src._read(path + ".missing"), [])

    def test_relative_name_is_found_on_sys_path(self):
        d, _ = self.write("on_path_mod.py", b"value = 7\n")
        sys.path.append(d)
        self.addCleanup(sys.path.remove, d)
        self.assertEqual(src._read("on_path_mod.py"), ["value = 7\n"])


if __name__ == "__main__":
    unittest.main()
