"""Launch sites from inside CPython: the collector reads the launching thread's Python frames from
its own memory, with or without the GIL (PyTorch releases it around every op it dispatches), keys
them by the innermost frames' code and position, names them later, and ties a launch from a thread
that has no Python frame to the Python thread waiting for it.

Run: python3.N python_sites_test.py PATH/TO/strata_site_probe.so   (CPython 3.10 to 3.14)
"""
import asyncio
import ctypes
import sys
import threading
import unittest

PROBE = sys.argv.pop(1) if len(sys.argv) > 1 else None


def parse(text):
    fields = dict(part.split("=", 1) for part in text.split(" ") if "=" in part)
    frames = []
    for f in fields.get("python", "").split("|"):
        if not f:
            continue
        function, rest = f.split("@", 1)
        where, line, call = rest.rsplit(":", 2)
        frames.append((function, where, int(line), int(call)))
    return {"site": int(fields["site"]), "fresh": fields["fresh"] == "1", "attribution": fields["attribution"],
            "caller": int(fields.get("caller", "0")), "frames": frames, "native": int(fields.get("native", "0"))}


def named(qualname):
    """A frame's function as the collector names it: co_qualname, or on 3.10 (no co_qualname) co_name."""
    return qualname if sys.version_info >= (3, 11) else qualname.rsplit(".", 1)[-1]


def line_of(marker):
    with open(__file__) as f:
        for number, line in enumerate(f, 1):
            if marker in line and "line_of(" not in line:
                return number
    raise AssertionError(marker)


class PythonSites(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # PyDLL keeps the GIL across the call; CDLL releases it, as PyTorch's ops do before
        # they launch (pybind11's gil_scoped_release around every op).
        cls.with_gil = ctypes.PyDLL(PROBE)
        cls.without_gil = ctypes.CDLL(PROBE)

    def launch(self, lib):
        buf = ctypes.create_string_buffer(65536)
        lib.strata_probe_launch(buf, len(buf))
        return parse(buf.value.decode())

    def launch_elsewhere(self):
        buf = ctypes.create_string_buffer(65536)
        self.without_gil.strata_probe_launch_from_thread(buf, len(buf))
        return parse(buf.value.decode())

    def launch_here(self):
        return self.launch(self.with_gil)  # @launch:here

    def launch_released(self):
        return self.launch(self.without_gil)  # @launch:released

    def assert_frame(self, frame, function, marker):
        self.assertEqual(frame[0], named(function))
        self.assertTrue(frame[1].endswith("python_sites_test.py"), frame)
        self.assertEqual(frame[2], line_of(marker), frame)

    def test_the_interpreter_and_its_layout_are_named(self):
        buf = ctypes.create_string_buffer(4096)
        self.with_gil.strata_probe_describe(buf, len(buf))
        text = buf.value.decode()
        v = sys.version_info
        self.assertTrue(text.startswith(f"CPython {v.major}.{v.minor}.{v.micro} ("), text)
        self.assertIn("_Py_DebugOffsets" if v >= (3, 13) else "table from the headers of CPython 3.%d" % v.minor, text)

    def test_frames_name_the_calling_lines(self):
        r = self.launch_here()
        self.assertTrue(r["fresh"])
        self.assertGreater(r["site"], 0)
        self.assertEqual(r["attribution"], "own")
        self.assertGreaterEqual(r["native"], 1)
        self.assertEqual(r["frames"][0][0], named("PythonSites.launch"))
        self.assert_frame(r["frames"][1], "PythonSites.launch_here", "@launch:here")
        self.assertEqual(r["frames"][2][0], named("PythonSites.test_frames_name_the_calling_lines"))

    def test_without_the_gil_the_frames_are_read_all_the_same(self):
        r = self.launch_released()  # @launch:test-released
        self.assertTrue(r["fresh"])
        self.assertEqual(r["attribution"], "own")
        self.assertEqual(r["frames"][0][0], named("PythonSites.launch"))
        self.assert_frame(r["frames"][1], "PythonSites.launch_released", "@launch:released")
        self.assert_frame(r["frames"][2], "PythonSites.test_without_the_gil_the_frames_are_read_all_the_same",
                          "@launch:test-released")

    def test_same_line_same_site_other_line_other_site(self):
        first = [self.launch_released() for _ in range(5)]
        self.assertEqual(len({r["site"] for r in first}), 1)
        self.assertEqual([r["fresh"] for r in first[1:]], [False] * 4)
        other = self.launch(self.without_gil)  # a different calling line
        self.assertNotEqual(other["site"], first[0]["site"])

    def test_other_python_threads_get_their_own_frames(self):
        results = []

        def worker():
            results.append(self.launch_released())

        t = threading.Thread(target=worker)
        t.start()
        t.join()
        r = results[0]
        self.assertTrue(r["fresh"])
        self.assertEqual(r["attribution"], "own")
        self.assertEqual(r["frames"][2][0],
                         named("PythonSites.test_other_python_threads_get_their_own_frames.<locals>.worker"))

    def test_a_thread_with_no_python_frame_has_none_of_its_own(self):
        r = self.launch_elsewhere()
        self.assertGreater(r["site"], 0)
        self.assertEqual(r["attribution"], "none")
        self.assertEqual(r["frames"], [])
        self.assertGreaterEqual(r["native"], 1)

    def backward(self):
        # What the collector's wrapper around torch's autograd engine does: this thread says it
        # waits (its frames but this one), then waits in C while another thread launches.
        slot = self.with_gil.strata_probe_scope_enter(1, 1)
        self.assertGreaterEqual(slot, 0)
        try:
            return self.launch_elsewhere()
        finally:
            self.with_gil.strata_probe_scope_leave(slot)

    def test_a_thread_with_no_python_frame_is_tied_to_the_python_thread_waiting_for_it(self):
        r = self.backward()  # @launch:backward
        self.assertTrue(r["fresh"])
        self.assertEqual(r["attribution"], "caller")
        self.assertEqual(r["caller"], threading.get_native_id())
        self.assert_frame(r["frames"][0],
                          "PythonSites.test_a_thread_with_no_python_frame_is_tied_to_the_python_thread_waiting_for_it",
                          "@launch:backward")
        # Once the waiting thread has left, the same launch is tied to nothing again.
        after = self.launch_elsewhere()
        self.assertEqual(after["attribution"], "none")
        self.assertNotEqual(after["site"], r["site"])

    def test_deep_stacks_keep_the_innermost_frames(self):
        def down(n):
            return self.launch_released() if n == 0 else down(n - 1)

        r = down(300)
        self.assertEqual(len(r["frames"]), 128)
        self.assertEqual(r["frames"][1][0], named("PythonSites.launch_released"))
        self.assertEqual(r["frames"][2][0], named("PythonSites.test_deep_stacks_keep_the_innermost_frames.<locals>.down"))

    def test_generators_and_coroutines(self):
        def gen():
            yield self.launch_released()

        r = next(gen())
        self.assertEqual(r["frames"][2][0], named("PythonSites.test_generators_and_coroutines.<locals>.gen"))

        async def coro():
            return self.launch_released()

        r = asyncio.run(coro())
        self.assertEqual(r["frames"][2][0], named("PythonSites.test_generators_and_coroutines.<locals>.coro"))

    def test_eval_calls_count_the_c_calls_between_python_frames(self):
        # sorted() is C: the key function runs in an evaluation of its own, outside this one's.
        out = []
        sorted([1], key=lambda _: out.append(self.launch_released()))  # @launch:key2
        f = out[0]["frames"]
        self.assertEqual(f[2][0], named("PythonSites.test_eval_calls_count_the_c_calls_between_python_frames.<locals>.<lambda>"))
        self.assert_frame(f[3], "PythonSites.test_eval_calls_count_the_c_calls_between_python_frames", "@launch:key2")
        launch, lam, test = f[0][3], f[2][3], f[3][3]
        self.assertGreaterEqual(launch, 1)
        self.assertGreaterEqual(lam, launch)
        self.assertGreater(test, lam)  # a C call stands between the lambda and this test
        if sys.version_info < (3, 11):
            self.assertEqual([x[3] for x in f[:4]], [launch, launch + 1, launch + 2, launch + 3])  # 3.10: one each
        else:
            self.assertEqual(lam, launch)  # 3.11+ runs Python-to-Python calls in the same evaluation


if __name__ == "__main__":
    if not PROBE:
        print("usage: python_sites_test.py PATH/TO/strata_site_probe.so")
        sys.exit(2)
    unittest.main()
