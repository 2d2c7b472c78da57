"""Late GPU collection through the agent: strataGpuStart/strataGpuStop load the built collector
(libstrata_cupti.so) into the running program with ctypes and start or stop it; the ring it
makes says the same as the reply. Without a GPU the reply says why nothing is collected."""
import glob
import os
import shutil
import struct
import tempfile

from agent_case import AgentCase, unittest

COLLECTOR = os.environ.get("STRATA_TEST_GPU_COLLECTOR", "")
# The ring header's status (backends/cuda/collector/include/strata/cuda/collector/ring_format.hpp).
STATE_OFFSET, TEXT_OFFSET, TEXT_SIZE, SESSION_OFFSET = 452, 504, 512, 48
STATES = {1: "starting", 2: "collecting", 3: "stopped", 4: "stood-aside", 5: "refused", 6: "failed", 7: "off"}


def ring_status(path):
    with open(path, "rb") as f:
        head = f.read(4096)
    state = STATES.get(struct.unpack_from("<I", head, STATE_OFFSET)[0], "?")
    text = head[TEXT_OFFSET:TEXT_OFFSET + TEXT_SIZE].split(b"\0", 1)[0].decode()
    session = head[SESSION_OFFSET:SESSION_OFFSET + 64].split(b"\0", 1)[0].decode()
    return state, text, session


class LateGpuRequests(AgentCase):
    def test_a_collector_that_does_not_load_is_a_clear_error(self):
        self.start("busy.py")
        self.go()
        r = self.c.request_raw("strataGpuStart", collector="/no/such/libstrata_cupti.so", config="mode=trace")
        self.assertFalse(r["success"])
        self.assertIn("cannot load the GPU collector /no/such/libstrata_cupti.so", r["message"])
        r = self.c.request_raw("strataGpuStart", config="mode=trace")
        self.assertFalse(r["success"])
        self.assertIn("arguments.collector", r["message"])

    @unittest.skipUnless(COLLECTOR and os.path.exists(COLLECTOR),
                         "libstrata_cupti.so was not built (no CUDA toolkit with CUPTI): the late GPU start is untested")
    def test_start_and_stop_in_the_running_program(self):
        self.start("busy.py")
        self.go()
        ring_dir = tempfile.mkdtemp(prefix="strata-gpu-agent-")
        self.addCleanup(shutil.rmtree, ring_dir, True)
        r = self.c.request_raw("strataGpuStart", collector=COLLECTOR,
                               config=f"mode=stacks dir={ring_dir} session=agent-test")
        rings = glob.glob(os.path.join(ring_dir, "strata-gpu-*.ring"))
        self.assertEqual([os.path.basename(p) for p in rings], [f"strata-gpu-{self.agent.proc.pid}.ring"])
        state, text, session = ring_status(rings[0])
        self.assertEqual(session, "agent-test")
        stop = self.c.request_raw("strataGpuStop", collector=COLLECTOR)
        if r["success"]:  # a machine with a GPU
            self.assertEqual(state, "collecting", text)
            self.assertTrue(r["body"]["status"].startswith("collecting"), r["body"])
            self.assertTrue(stop["success"], stop.get("message"))
            self.assertIn("stopped", stop["body"]["status"])
            self.assertEqual(ring_status(rings[0])[0], "stopped")
        else:  # no GPU or driver: the collector's reason, the same in the reply and the ring
            self.assertIn(state, ("failed", "refused"), text)
            self.assertTrue(r["message"].startswith("GPU collection did not start: "), r["message"])
            self.assertIn(text, r["message"])
            self.assertFalse(stop["success"])
            self.assertIn("GPU collection did not stop", stop["message"])
        # The program runs on, debuggable: a pause still stops it.
        self.c.request("pause", threadId=0)
        self.stopped("pause")


if __name__ == "__main__":
    unittest.main()
