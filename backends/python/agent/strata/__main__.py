"""python -m strata [--listen|--connect HOST:PORT] [--wait-for-client] (file | -m module | -c code) args."""
import os
import sys

USAGE = ("usage: python -m strata (--listen [HOST:]PORT | --connect [HOST:]PORT) [--wait-for-client]\n"
         "                        [--port-file PATH] [--token TOKEN] [--stop-on-entry]\n"
         "                        (script.py | -m module | -c code) [args...]\n"
         "off loopback a token is required (--token or STRATA_TOKEN)\n")


def _parse(argv):
    opts = {"listen": None, "connect": None, "wait": False, "port_file": None, "entry": False, "token": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--listen", "--connect", "--port-file", "--token"):
            if i + 1 >= len(argv):
                raise SystemExit(USAGE + f"{a} needs a value")
            opts[a[2:].replace("-", "_")] = argv[i + 1]
            i += 2
        elif a == "--wait-for-client":
            opts["wait"] = True
            i += 1
        elif a == "--stop-on-entry":
            opts["entry"] = True
            i += 1
        elif a in ("-m", "-c"):
            if i + 1 >= len(argv):
                raise SystemExit(USAGE + f"{a} needs a value")
            return opts, a, argv[i + 1], argv[i + 2:]
        elif a.startswith("-"):
            raise SystemExit(USAGE + f"unknown option {a}")
        else:
            return opts, "file", a, argv[i + 1:]
    raise SystemExit(USAGE + "nothing to run")


def _strip_own_frames(tb):
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    while tb is not None and (tb.tb_frame.f_code.co_filename.startswith(here)
                              or tb.tb_frame.f_code.co_filename.endswith("runpy.py")):
        tb = tb.tb_next
    return tb


def _run(kind, target, args, entry):
    import types
    if kind == "module":
        if entry:
            entry(None)
        import runpy
        sys.argv = [target] + args
        sys.path.insert(0, os.getcwd())
        runpy.run_module(target, run_name="__main__", alter_sys=True)
        return
    mod = types.ModuleType("__main__")
    g = mod.__dict__
    g["__builtins__"] = __builtins__
    if kind == "code":
        import linecache
        sys.argv = ["-c"] + args
        sys.path.insert(0, "")
        filename = "<string>"
        source = target
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    else:
        filename = os.path.abspath(target)
        sys.argv = [target] + args
        sys.path.insert(0, os.path.dirname(filename))
        g["__file__"] = filename
        g["__cached__"] = None
        with open(filename, "rb") as f:
            source = f.read()
    sys.modules["__main__"] = mod
    code = compile(source, filename, "exec", dont_inherit=True)
    from . import _agent
    code = _agent.get().monitor.tables.prepare_main(code)
    if entry:
        entry(code)
    exec(code, g)


def main():
    opts, kind, target, args = _parse(sys.argv[1:])
    kind = {"-m": "module", "-c": "code"}.get(kind, kind)
    # python -m puts the cwd first on sys.path; python script.py puts the script's folder.
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]
    from . import _agent
    from . import _link
    from ._link import parse_address
    agent = _agent.get()
    try:
        if opts["listen"]:
            host, port = parse_address(opts["listen"])
            agent.listen(host, port, opts["port_file"], opts["token"])
        elif opts["connect"]:
            host, port = parse_address(opts["connect"])
            agent.connect(host, port, opts["token"])
            opts["wait"] = True
        else:
            raise SystemExit(USAGE + "--listen or --connect is required")
    except _link.TokenRequired as e:
        raise SystemExit(str(e)) from None
    except OSError as e:
        where = opts["listen"] or opts["connect"]
        what = "listen on" if opts["listen"] else "connect to"
        raise SystemExit(f"strata: cannot {what} {where}: {e.strerror or e}") from None
    if opts["wait"]:
        agent.wait_for_client()
    entry = None
    if (opts["entry"] or agent.options.get("stopOnEntry")) and agent.connected.is_set():
        import threading
        ident = threading.get_ident()

        def entry(code):
            agent.monitor.parking.request_entry(ident, code)
    try:
        _run(kind, target, args, entry)
    except SystemExit as e:
        code = e.code
        agent.exit_code = code if isinstance(code, int) else (0 if code is None else 1)
        raise
    except BaseException as e:
        agent.exit_code = 1
        e.__traceback__ = _strip_own_frames(e.__traceback__)
        sys.excepthook(type(e), e, e.__traceback__)
        sys.stderr.flush()
        raise SystemExit(1) from None
    agent.exit_code = 0


if __name__ == "__main__":
    main()
