"""The adapter link: DAP Content-Length framing over a socket, one client at a time."""
import json
import socket
import threading

_HEADER_END = b"\r\n\r\n"
MAX_MESSAGE = 64 << 20


class LinkClosed(Exception):
    pass


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
                        msg = json.loads(body)
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

    def _frame(self, msg):
        self._seq += 1
        msg["seq"] = self._seq
        body = json.dumps(msg, separators=(",", ":"), default=repr).encode()
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
    text = str(text)
    if ":" in text:
        host, _, port = text.rpartition(":")
        return host or default_host, int(port)
    return default_host, int(text)


def make_listener(host, port):
    srv = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, port))
    srv.listen(1)
    return srv


def dial(host, port, timeout=10.0):
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.settimeout(None)
    return Connection(sock)
