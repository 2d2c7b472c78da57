"""The adapter link: DAP Content-Length framing over a socket, one client at a time."""
import threading

# The C halves of json and socket, used directly: the Python modules would pull in re,
# enum and selectors, which cost more start-up time than all of the agent's own code.
try:
    import _json
    import _socket as socket
except ImportError:  # not CPython: the ordinary modules do the same job
    _json = None
    import socket

_HEADER_END = b"\r\n\r\n"
MAX_MESSAGE = 64 << 20


class LinkClosed(Exception):
    pass


class _ScanContext:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo = None

    @staticmethod
    def parse_constant(name):
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


if _json is not None:
    _scan = _json.make_scanner(_ScanContext())
    _encode = _json.make_encoder(None, repr, _json.encode_basestring, None, ":", ",", False, False, True)

    def dumps(obj):
        return "".join(_encode(obj, 0))

    def loads(text):
        if isinstance(text, (bytes, bytearray)):
            text = text.decode("utf-8")
        i = 0
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        try:
            obj, end = _scan(text, i)
        except StopIteration:
            raise ValueError("not JSON") from None
        except SystemError:
            # 3.10 and 3.11: the scanner's error path looks json.decoder up in sys.modules
            # without importing it, and fails so where nothing imported it.
            raise ValueError("not JSON") from None
        if text[end:].strip():
            raise ValueError("extra data after JSON")
        return obj
else:
    import json as _std_json

    def dumps(obj):
        return _std_json.dumps(obj, separators=(",", ":"), default=repr)

    def loads(text):
        return _std_json.loads(text)


def _tune(sock):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    # A peer that vanishes without a FIN (network gone) is noticed within about 2 s.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for opt, val in (("TCP_KEEPIDLE", 1), ("TCP_KEEPINTVL", 1), ("TCP_KEEPCNT", 1)):
        if hasattr(socket, opt):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, opt), val)
            except OSError:
                pass


class Connection:
    """One framed DAP stream. Sends are serialised; reads happen on one thread."""

    def __init__(self, sock):
        _tune(sock)
        self.sock = sock
        self._buf = bytearray()
        self._wlock = threading.Lock()
        self._seq = 0
        self.closed = False

    def read(self):
        while True:
            end = self._buf.find(_HEADER_END)
            if end >= 0:
                length = None
                for line in bytes(self._buf[:end]).split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        try:
                            length = int(value.strip())
                        except ValueError:
                            pass
                if length is None or length < 0 or length > MAX_MESSAGE:
                    raise LinkClosed("bad Content-Length header")
                start = end + len(_HEADER_END)
                if len(self._buf) >= start + length:
                    body = bytes(self._buf[start:start + length])
                    del self._buf[:start + length]
                    try:
                        msg = loads(body)
                    except ValueError:
                        msg = None
                    # A malformed message is dropped; the session goes on.
                    return msg if isinstance(msg, dict) else {}
            try:
                chunk = self.sock.recv(1 << 16)
            except OSError as e:
                raise LinkClosed(str(e)) from None
            if not chunk:
                raise LinkClosed("peer closed the link")
            self._buf += chunk

    def check_token(self, token, timeout=5.0):
        """Reads the peer's first line, which must be `STRATA-TOKEN <token>`, before any DAP
        message; whatever follows it stays buffered for read()."""
        want = b"STRATA-TOKEN " + token.encode()
        try:
            self.sock.settimeout(timeout)
            while b"\n" not in self._buf:
                if len(self._buf) > 512:
                    return False
                chunk = self.sock.recv(4096)
                if not chunk:
                    return False
                self._buf += chunk
            self.sock.settimeout(None)
        except OSError:
            return False
        end = self._buf.index(b"\n")
        line = bytes(self._buf[:end]).rstrip(b"\r")
        del self._buf[:end + 1]
        # Constant time: how long the comparison takes says nothing about how much matched.
        diff = len(line) ^ len(want)
        for i, ch in enumerate(want):
            diff |= ch ^ (line[i] if i < len(line) else 0)
        return diff == 0

    def _frame(self, msg):
        self._seq += 1
        msg["seq"] = self._seq
        body = dumps(msg).encode()
        return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)

    def send(self, msg):
        self.send_many((msg,))

    def send_many(self, msgs):
        with self._wlock:
            if self.closed:
                return False
            data = b"".join(self._frame(m) for m in msgs)
            try:
                self.sock.sendall(data)
                return True
            except OSError:
                self.closed = True
                return False

    def send_raw_bodies(self, bodies):
        """Sends pre-serialised messages given as (head, tail) with the seq number between."""
        with self._wlock:
            if self.closed:
                return False
            parts = []
            for head, tail in bodies:
                self._seq += 1
                body = (head + str(self._seq) + tail).encode()
                parts.append(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            try:
                self.sock.sendall(b"".join(parts))
                return True
            except OSError:
                self.closed = True
                return False

    def close(self, shutdown=True):
        with self._wlock:
            self.closed = True
        try:
            if shutdown:
                self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass


def parse_address(text, default_host="127.0.0.1"):
    """HOST:PORT, [V6]:PORT or PORT."""
    text = str(text)
    if ":" in text:
        host, _, port = text.rpartition(":")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        return host or default_host, int(port)
    return default_host, int(text)


def is_loopback(host):
    h = str(host).strip("[]").lower()
    return h == "localhost" or h.startswith("127.") or h in ("::1", "0:0:0:0:0:0:0:1")


class TokenRequired(ValueError):
    pass


def require_token(host, token, what):
    """A debug port off loopback runs arbitrary code for whoever reaches it: never without a token."""
    if not token and not is_loopback(host):
        raise TokenRequired(
            f"strata: {what} {host} (not a loopback address) requires a token: pass --token TOKEN "
            f"or set STRATA_TOKEN (the adapter gives the same token in its attach arguments), "
            f"or use 127.0.0.1 with an SSH tunnel")


def make_listener(host, port):
    srv = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, port))
    srv.listen(1)
    return srv


def accept(listener):
    if hasattr(listener, "_accept"):
        fd, _ = listener._accept()
        return Connection(socket.socket(fileno=fd))
    return Connection(listener.accept()[0])


def _numeric(host):
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
            return family
        except (OSError, ValueError):
            pass
    return None


def dial(host, port, timeout=10.0, token=None):
    conn = _dial(host, port, timeout)
    if token:
        try:
            conn.sock.sendall(b"STRATA-TOKEN " + token.encode() + b"\r\n")
        except OSError as e:
            conn.close()
            raise e
    return conn


def _dial(host, port, timeout):
    last = None
    family = _numeric(host)
    # An address literal needs no resolver (getaddrinfo loads NSS modules: milliseconds).
    targets = ([(family, socket.SOCK_STREAM, 0, "", (host, port))] if family is not None
               else socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM))
    for family, type_, proto, _, addr in targets:
        sock = socket.socket(family, type_, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(addr)
            sock.settimeout(None)
            return Connection(sock)
        except OSError as e:
            last = e
            sock.close()
    raise last or OSError(f"cannot connect to {host}:{port}")


def name_os_thread(name):
    """Gives the calling thread, one of the agent's own, its name at the OS level too (what a
    native debugger, ps and /proc show), so that mixed mode and the tools can tell the agent's
    threads from the program's. On 3.10 and 3.11 it also takes the thread out of tracing: an
    agent thread started while the trace function was on got it from threading's hook, and
    an event of its own would run agent code where a repr time limit's exception could land."""
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as comm:
            comm.write(name[:15])
    except OSError:
        pass
    try:
        from . import _strata_core as core
    except ImportError:
        return
    if getattr(core, "TRACING", False):
        core.trace_internal_thread()
