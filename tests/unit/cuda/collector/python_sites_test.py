"""Launch sites from inside CPython: the collector's capture walks the calling thread's Python
frames (only while it holds the GIL) and dedupes by the innermost frames' code and position.

Run: python3.12 python_sites_test.py PATH/TO/strata_site_probe.so
"""
import ctypes
import sys
import threading
import unittest

PROBE = sys.argv.pop(1) if len(sys.argv) > 1 else None


def parse(text):
    fields = dict(part.split("=", 1) for part in text.split(" ") if "=" in part)
    frames = [f for f in fields.get("python", "").split("|") if f]
    return int(fields["site"]), fields["fresh"] == "1", frames, int(fields.get("native", "0"))


class PythonSites(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # PyDLL keeps the GIL across the call, as a CUDA launch made from Python code does.
        cls.with_gil = ctypes.PyDLL(PROBE)
        cls.without_gil = ctypes.CDLL(PROBE)  # releases it, as a C++ thread without Python would hold none

    def launch(self, lib):
        buf = ctypes.create_string_buffer(8192)
        lib.strata_probe_launch(buf, len(buf))
        return parse(buf.value.decode())

    def launch_here(self):
        return self.launch(self.with_gil)  # @launch:here

    def test_frames_name_the_calling_lines(self):
        site, fresh, frames, native = self.launch_here()
        self.assertTrue(fresh)
        self.assertGreater(site, 0)
        self.assertGreaterEqual(native, 1)
        func, where = frames[0].split("@", 1)
        self.assertEqual(func, "PythonSites.launch")
        self.assertTrue(where.endswith("python_sites_test.py:%d" % self.line_of("buf, len(buf)")), where)
        self.assertEqual(frames[1].split("@")[0], "PythonSites.launch_here")
        self.assertTrue(frames[1].endswith(":%d" % self.line_of("@launch:here")), frames[1])
        self.assertEqual(frames[2].split("@")[0], "PythonSites.test_frames_name_the_calling_lines")

    def test_same_line_same_site_other_line_other_site(self):
        first = [self.launch_here() for _ in range(5)]
        self.assertEqual(len({s for s, _, _, _ in first}), 1)
        self.assertEqual([f for _, f, _, _ in first[1:]], [False] * 4)
        other = self.launch(self.with_gil)  # a different calling line
        self.assertNotEqual(other[0], first[0][0])

    def test_without_the_gil_no_python_frames_are_touched(self):
        site, fresh, frames, native = self.launch(self.without_gil)
        self.assertGreater(site, 0)
        if fresh:
            self.assertEqual(frames, [])
            self.assertGreaterEqual(native, 1)

    def test_other_threads_get_their_own_frames(self):
        results = []

        def worker():
            results.append(self.launch(self.with_gil))

        t = threading.Thread(target=worker)
        t.start()
        t.join()
        site, fresh, frames, _ = results[0]
        self.assertTrue(fresh)
        self.assertEqual(frames[1].split("@")[0], "PythonSites.test_other_threads_get_their_own_frames.<locals>.worker")

    def line_of(self, marker):
        with open(__file__) as f:
            for number, line in enumerate(f, 1):
                if marker in line and "line_of(" not in line:
                    return number
        raise AssertionError(marker)


if __name__ == "__main__":
    if not PROBE:
        print("usage: python_sites_test.py PATH/TO/strata_site_probe.so")
        sys.exit(2)
    unittest.main()
