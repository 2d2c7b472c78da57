#!/usr/bin/env python3
"""The editor set-ups in editors/ against the real adapter.

- Neovim: editors/nvim/lua/strata/dap.lua is loaded in headless Neovim (tests/editors/
  nvim_dump.lua; nvim-dap is not packaged in Debian, so `dap` is a minimal table on
  package.loaded) and setup() is called with the built strata-dap; what it registers is read back
  as JSON and checked, and its "launch file" and "launch program" configurations, resolved as
  nvim-dap resolves them, are sent to the real strata-dap by a small DAP client here: each must
  stop at its breakpoint line and run to its end.
- Emacs: editors/emacs/dap-strata.el is byte-compiled (warnings are errors) and loaded in
  `emacs --batch` (tests/editors/emacs_dump.el), with dap-mode where Emacs finds it (Debian's
  elpa-dap-mode), else with a stub of dap-mode's registration functions that only shows the file
  compiles, loads and registers; its Python and native templates, resolved as `dap-debug' does,
  go to the real adapter the same way.
- Helix and Zed: editors/helix/languages.toml (tomllib) and editors/zed/debug.json (json) are
  parsed and checked against Helix's template schema and the configuration attributes that
  vscode-extension/package.json declares; Helix's command and arguments must be options of
  `strata-dap --help` and start the adapter; their Python and native templates, filled in as
  Helix and Zed fill them, are sent to the real adapter too.

Every configuration's keys must be ones package.json declares for its request. Environment:
STRATA_DAP (default build/release/adapter/strata-dap), CC (default cc), STRATA_EMACS_STUB=1 (the
dap-mode stub even where dap-mode is installed), STRATA_KEEP_WORK=1 (keep the work folder). A
missing nvim or emacs, or a Python without tomllib, makes the run a skip (exit 77, "SKIPPED:
..."), never a pass.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from dap_session import run_session

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
COMMON_KEYS = {"type", "request", "name"}

PY_SOURCE = """\
def double(x):
    y = x * 2
    return y


print("double:", double(21))
"""
PY_LINE = 2

C_SOURCE = """\
#include <stdio.h>

static int twice(int x) {
  int y = x * 2;
  return y;
}

int main(void) {
  printf("twice: %d\\n", twice(21));
  return 0;
}
"""
C_LINE = 4


class Report:
    def __init__(self):
        self.failures = []
        self.skips = []

    def ok(self, what):
        print(f"ok: {what}", flush=True)

    def fail(self, what):
        self.failures.append(what)
        print(f"FAIL: {what}", flush=True)

    def skip(self, what):
        self.skips.append(what)
        print(f"skip: {what}", flush=True)

    def check(self, condition, what, detail=""):
        if condition:
            self.ok(what)
        else:
            self.fail(what + (f": {detail}" if detail else ""))
        return condition


def declared_attributes():
    with open(os.path.join(REPO, "vscode-extension", "package.json"), encoding="utf-8") as f:
        package = json.load(f)
    debugger = next(d for d in package["contributes"]["debuggers"] if d["type"] == "strata")
    return {request: set(schema["properties"]) | COMMON_KEYS
            for request, schema in debugger["configurationAttributes"].items()}


def undeclared(config, attributes, ignore=()):
    request = config.get("request")
    if request not in attributes:
        return [f"request {request!r}"]
    return sorted(k for k in config if k not in attributes[request] and k not in ignore)


def help_options(adapter):
    out = subprocess.run([adapter, "--help"], capture_output=True, text=True, timeout=30).stdout
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", out))


class Fixture:
    """The programs the sessions debug: a Python script and a C program built with -g."""

    def __init__(self, work, report):
        self.work = work
        self.script = os.path.join(work, "double.py")
        with open(self.script, "w", encoding="utf-8") as f:
            f.write(PY_SOURCE)
        self.c_source = os.path.join(work, "twice.c")
        with open(self.c_source, "w", encoding="utf-8") as f:
            f.write(C_SOURCE)
        os.makedirs(os.path.join(work, "build"))
        self.program = os.path.join(work, "build", "program")
        cc = os.environ.get("CC") or "cc"
        self.native_skip = None
        if not shutil.which(cc):
            self.native_skip = f"no C compiler ({cc}) to build the native program"
            report.skip(self.native_skip)
            return
        built = subprocess.run([cc, "-g", "-O0", "-o", self.program, self.c_source],
                               capture_output=True, text=True)
        if built.returncode != 0:
            report.fail(f"{cc} could not build the native program: {built.stderr.strip()}")
            self.native_skip = "the native program did not build"


def drive(report, what, argv, config, fixture, kind, log_path, adapter_id="strata", request=None):
    """Sends CONFIG to the adapter ARGV starts (ADAPTER_ID: the `initialize` adapterID the editor
    sends) and checks the session stops at the fixture's line and runs to the end."""
    if kind == "native" and fixture.native_skip:
        report.skip(f"{what}: {fixture.native_skip}")
        return
    source, line, output = ((fixture.script, PY_LINE, "double: 42") if kind == "python"
                            else (fixture.c_source, C_LINE, "twice: 42"))
    problem = run_session(argv, config, source, line, output, fixture.work, log_path, adapter_id, request)
    report.check(problem is None,
                 f"{what}: stopped at {os.path.basename(source)}:{line} and ran to its end under "
                 f"{os.path.basename(argv[0])} {' '.join(argv[1:])}",
                 f"{problem} (adapter's stderr: {log_path})")


def editor_dump(report, editor, what, argv, out, timeout, **kw):
    """Runs an editor headless with a script that writes what it registered, as JSON, to OUT:
    that JSON (None with the failure reported) and the editor's stderr."""
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, **kw)
    except subprocess.TimeoutExpired:
        report.fail(f"{editor}: {what} did not load within {timeout} s")
        return None, ""
    if not os.path.exists(out):
        report.fail(f"{editor} wrote nothing (exit {run.returncode}): {run.stderr.strip()[-2000:]}")
        return None, run.stderr
    with open(out, encoding="utf-8") as f:
        return json.load(f), run.stderr


def check_nvim(report, adapter, attributes, fixture, work):
    nvim = shutil.which("nvim")
    if not nvim:
        report.skip("nvim is not installed (Debian: apt-get install neovim), so editors/nvim is not checked")
        return
    out = os.path.join(work, "nvim.json")
    token_file = os.path.join(work, "agent-token")
    with open(token_file, "w", encoding="utf-8") as f:
        f.write("nvim-token-1\n")
    answers = {
        "pid": 4242,
        "input": {
            "Program: ": fixture.program,
            "Arguments: ": "one 'two three'  \"four\"",
            "Module: ": "pkg.train",
            "Agent host [127.0.0.1]: ": "",
            "Agent port [5678]: ": "",
            "Token file (empty: none): ": token_file,
            "GPU trace file: ": "",
        },
    }
    env = dict(os.environ, STRATA_NVIM_OUT=out, STRATA_DAP=adapter,
               STRATA_NVIM_ANSWERS=json.dumps(answers))
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        env.pop(var, None)
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n",
            "--cmd", f"set rtp^={os.path.join(REPO, 'editors', 'nvim')}",
            "-c", f"luafile {os.path.join(HERE, 'nvim_dump.lua')}", fixture.script]
    dump, _ = editor_dump(report, "nvim", "the module", argv, out, 120, cwd=work, env=env)
    if dump is None:
        return
    v = dump.get("nvim_version", {})
    print(f"nvim {v.get('major')}.{v.get('minor')}.{v.get('patch')}", flush=True)
    if not report.check(dump.get("ok"), "nvim: require('strata.dap').setup() runs", dump.get("error")):
        return
    report.check(not dump.get("setup_notifications"), "nvim: setup() with a strata-dap says nothing",
                 json.dumps(dump.get("setup_notifications")))
    a = dump.get("adapter") or {}
    report.check(a.get("type") == "executable"
                 and os.path.realpath(a.get("command", "")) == os.path.realpath(adapter)
                 and a.get("args") == ["--stdio"] and a.get("enrich_config") == "<function>",
                 "nvim: dap.adapters.strata starts strata-dap --stdio, with enrich_config", json.dumps(a))
    options = help_options(adapter)
    report.check(all(x in options for x in a.get("args", []) if x.startswith("-")),
                 "nvim: the adapter's arguments are options of strata-dap --help", json.dumps(a.get("args")))
    report.check("strata" in dump.get("listeners", []), "nvim: the gpuActivity event has a handler")
    missing = dump.get("missing_adapter") or ""
    report.check(all(s in missing for s in ("/usr/bin/strata-dap", "cmake --install", "pip install", "adapter_path")),
                 "nvim: with no strata-dap the error says how to install one", missing)

    configs = {ft: {c["raw"]["name"]: c for c in entries}
               for ft, entries in (dump.get("configurations") or {}).items()}
    expected = {
        "python": ["Strata: launch file", "Strata: launch file with arguments", "Strata: launch module",
                   "Strata: launch file (Python + C/C++)", "Strata: launch file with GPU collection",
                   "Strata: attach to a process", "Strata: attach to a process (Python + C/C++)",
                   "Strata: connect to an agent (python -m strata --listen)", "Strata: open a GPU trace"],
        "c": ["Strata: launch program", "Strata: launch program with arguments",
              "Strata: attach to a process", "Strata: open a GPU trace"],
    }
    expected["cpp"] = expected["c"]
    expected["cuda"] = expected["c"] + ["Strata: launch program with GPU collection"]
    for ft, names in expected.items():
        got = configs.get(ft, {})
        report.check(sorted(got) == sorted(names), f"nvim: dap.configurations.{ft} holds Strata's configurations",
                     f"got {sorted(got)}")
        bad = {n: undeclared(c["raw"], attributes) for n, c in got.items()}
        bad = {n: keys for n, keys in bad.items() if keys}
        report.check(not bad, f"nvim: every {ft} configuration uses attributes package.json declares", json.dumps(bad))
        report.check(all(c["raw"].get("type") == "strata" for c in got.values()),
                     f"nvim: every {ft} configuration is of type strata")

    py = configs.get("python", {})
    resolved = {n: c.get("resolved") for n, c in py.items()}
    report.check((resolved.get("Strata: launch file with arguments") or {}).get("args") == ["one", "two three", "four"],
                 "nvim: the arguments prompt splits on blanks and keeps quoted words whole",
                 json.dumps(resolved.get("Strata: launch file with arguments")))
    report.check((resolved.get("Strata: launch module") or {}).get("module") == "pkg.train",
                 "nvim: the module prompt gives `module`")
    report.check((resolved.get("Strata: attach to a process (Python + C/C++)") or {}) .get("processId") == 4242
                 and resolved["Strata: attach to a process (Python + C/C++)"].get("native") is True,
                 "nvim: attach takes the picked pid", json.dumps(resolved.get("Strata: attach to a process (Python + C/C++)")))
    connect = resolved.get("Strata: connect to an agent (python -m strata --listen)") or {}
    report.check(connect.get("connect") == {"host": "127.0.0.1", "port": 5678}
                 and connect.get("token") == "nvim-token-1" and "tokenFile" not in connect,
                 "nvim: connect asks host and port (127.0.0.1:5678 by default); tokenFile is read into token",
                 json.dumps(connect))
    report.check(resolved.get("Strata: open a GPU trace") == "<dap.ABORT>",
                 "nvim: an empty answer to a prompt aborts the session")
    report.check(dump.get("enrich_python") == {"py": "/opt/py/bin/python3", "mod": "/opt/py/bin/python3",
                                               "native": None, "own": "/usr/bin/python3", "pid": None},
                 "nvim: setup({python}) goes to Python launches only, never over a configuration's own",
                 json.dumps(dump.get("enrich_python")))
    report.check(dump.get("bad_token_started") is False and "/nonexistent/token" in (dump.get("bad_token_said") or ""),
                 "nvim: an unreadable token file stops the session, saying which", str(dump.get("bad_token_said")))
    runs = dump.get("runs") or []
    report.check(len(runs) == 2 and runs[0].get("processId") == 4242 and runs[0].get("native") is True
                 and runs[0].get("request") == "attach"
                 and runs[1].get("trace") == os.path.join(work, "trace.json") and runs[1].get("request") == "launch",
                 "nvim: require('strata.dap').attach(pid) and .open_trace(path) start sessions", json.dumps(runs))

    argv = [a.get("command", adapter)] + a.get("args", [])
    launch = resolved.get("Strata: launch file")
    if report.check(isinstance(launch, dict) and launch.get("program") == fixture.script,
                    "nvim: 'Strata: launch file' resolves ${file} to the buffer's file", json.dumps(launch)):
        drive(report, "nvim 'Strata: launch file'", argv, launch, fixture, "python",
              os.path.join(work, "nvim-python.log"))
    native = (configs.get("c", {}).get("Strata: launch program") or {}).get("resolved")
    if report.check(isinstance(native, dict) and native.get("program") == fixture.program,
                    "nvim: 'Strata: launch program' takes the program prompt's answer", json.dumps(native)):
        drive(report, "nvim 'Strata: launch program'", argv, native, fixture, "native",
              os.path.join(work, "nvim-native.log"))


def check_emacs(report, adapter, attributes, fixture, work):
    emacs = shutil.which("emacs")
    if not emacs:
        report.skip("emacs is not installed (Debian: apt-get install emacs-nox), so editors/emacs is not checked")
        return
    out = os.path.join(work, "emacs.json")
    elc = os.path.join(work, "elc")
    os.makedirs(elc)
    token_file = os.path.join(work, "emacs-token")
    with open(token_file, "w", encoding="utf-8") as f:
        f.write("emacs-token-1\n")
    env = dict(os.environ, STRATA_EMACS_DIR=os.path.join(REPO, "editors", "emacs"), STRATA_EMACS_OUT=out,
               STRATA_EMACS_WORK=elc, STRATA_EMACS_SCRIPT=fixture.script, STRATA_EMACS_PROGRAM=fixture.program,
               STRATA_EMACS_PID="4242", STRATA_DAP=adapter, STRATA_EMACS_TOKEN_FILE=token_file)
    dump, stderr = editor_dump(report, "emacs", "dap-strata.el", [emacs, "--batch", "-Q", "-l", os.path.join(HERE, "emacs_dump.el")],
                       out, 180, cwd=work, env=env)
    if dump is None:
        return
    print(f"emacs {dump.get('emacs_version')}, dap-mode: {dump.get('dap_mode')}", flush=True)
    if dump.get("dap_mode") != "real":
        print("note: dap-mode was not loaded (Debian: apt-get install elpa-dap-mode): dap-strata.el is checked "
              "against a stub of dap-mode's registration functions, which shows that it compiles and loads "
              "and what it registers, not dap-mode's handling of it", flush=True)
    if not report.check(dump.get("ok") is True, "emacs: dap-strata.el byte-compiles with no warning and loads",
                        f"{dump.get('error')}\n{stderr.strip()[-3000:]}"):
        return
    report.check(dump.get("provider") is True, "emacs: a debug provider is registered for \"strata\"")
    report.check(dump.get("gpuActivity_handled") is True, "emacs: the gpuActivity event has a handler")
    missing = dump.get("missing_adapter") or ""
    report.check(all(s in missing for s in ("/usr/bin/strata-dap", "cmake --install", "pip install", "strata-dap-path")),
                 "emacs: with no strata-dap the error says how to install one", missing)
    templates = {t["name"]: t for t in dump.get("templates", [])}
    names = ["Strata :: Python file", "Strata :: Python file (Python + C/C++)", "Strata :: Native program",
             "Strata :: Attach to a process", "Strata :: Connect to an agent"]
    report.check(sorted(templates) == sorted(names), "emacs: the Strata templates are registered", f"got {sorted(templates)}")
    options = help_options(adapter)
    for name, t in templates.items():
        sent = t["resolved"]["sent"]
        server = t["resolved"]["server"] or []
        report.check(server[:1] == [adapter] and all(x in options for x in server[1:] if x.startswith("-"))
                     and "--stdio" in server,
                     f"emacs: {name!r} starts strata-dap --stdio", json.dumps(server))
        report.check(not undeclared(sent, attributes) and sent.get("type") == "strata",
                     f"emacs: {name!r} sends attributes package.json declares", json.dumps(undeclared(sent, attributes)))
    attach = templates.get("Strata :: Attach to a process", {}).get("resolved", {}).get("sent", {})
    report.check(str(attach.get("processId")) == "4242", "emacs: attach takes the picked pid", json.dumps(attach))
    token = dump.get("token_resolved") or {}
    report.check(token.get("token") == "emacs-token-1" and "tokenFile" not in token,
                 "emacs: tokenFile is read into token", json.dumps(token))
    py = templates.get("Strata :: Python file", {}).get("resolved", {})
    if report.check(py.get("sent", {}).get("program") == fixture.script,
                    "emacs: 'Strata :: Python file' runs the buffer's file", json.dumps(py.get("sent"))):
        drive(report, "emacs 'Strata :: Python file'", py["server"], py["sent"], fixture, "python",
              os.path.join(work, "emacs-python.log"))
    native = templates.get("Strata :: Native program", {}).get("resolved", {})
    if report.check(native.get("sent", {}).get("program") == fixture.program,
                    "emacs: 'Strata :: Native program' asks for the program", json.dumps(native.get("sent"))):
        drive(report, "emacs 'Strata :: Native program'", native["server"], native["sent"], fixture, "native",
              os.path.join(work, "emacs-native.log"))


def helix_fill(template, answers, cwd):
    """The arguments Helix sends for TEMPLATE (helix-term's dap_start_impl and map_value): its
    `args` with the answers filled in and Helix's working directory as `cwd`; the request itself
    (`launch`, `attach`) is not among them."""
    def fill(value):
        if isinstance(value, str):
            for i, answer in enumerate(answers):
                value = value.replace("{%d}" % i, answer)
            return int(value) if value.isdigit() else value
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value
    args = {k: fill(v) for k, v in template["args"].items()}
    args["cwd"] = cwd
    return args


def check_helix(report, adapter, attributes, fixture, work):
    try:
        import tomllib
    except ImportError:
        report.skip(f"Python {sys.version.split()[0]} has no tomllib (3.11+), so editors/helix is not checked")
        return
    with open(os.path.join(REPO, "editors", "helix", "languages.toml"), "rb") as f:
        doc = tomllib.load(f)
    languages = {lang.get("name"): lang for lang in doc.get("language", [])}
    report.check(sorted(languages) == ["c", "cpp", "python"], "helix: debuggers for python, c and cpp",
                 f"got {sorted(languages)}")
    options = help_options(adapter)
    for name, lang in languages.items():
        dbg = lang.get("debugger", {})
        report.check(dbg.get("name") == "strata-dap" and dbg.get("transport") == "stdio"
                     and dbg.get("command") == "strata-dap" and dbg.get("args") == ["--stdio"],
                     f"helix: {name} runs strata-dap --stdio over stdio", json.dumps(dbg, default=str)[:300])
        report.check(all(x in options for x in dbg.get("args", []) if x.startswith("-")),
                     f"helix: {name}'s adapter arguments are options of strata-dap --help")
        for t in dbg.get("templates", []):
            tname = f"helix: {name} template {t.get('name')!r}"
            problems = []
            if set(t) - {"name", "request", "completion", "args"}:
                problems.append(f"unknown keys {sorted(set(t) - {'name', 'request', 'completion', 'args'})}")
            for c in t.get("completion", []):
                if isinstance(c, dict):
                    if set(c) - {"name", "completion", "default"}:
                        problems.append(f"completion keys {sorted(c)}")
                    if c.get("completion") not in (None, "filename", "directory"):
                        problems.append(f"completion kind {c.get('completion')!r}")
                elif not isinstance(c, str):
                    problems.append(f"completion entry {c!r}")
            used = {int(n) for n in re.findall(r"\{(\d+)\}", json.dumps(t.get("args")))}
            if used and max(used) >= len(t.get("completion", [])):
                problems.append(f"placeholders {sorted(used)} for {len(t.get('completion', []))} prompts")
            config = dict(t.get("args", {}), request=t.get("request"))
            problems += [f"undeclared {k}" for k in undeclared(config, attributes)]
            report.check(not problems, f"{tname} follows Helix's schema and package.json", "; ".join(problems))
    argv = [adapter] + languages.get("python", {}).get("debugger", {}).get("args", [])
    templates = {t["name"]: t for t in languages.get("python", {}).get("debugger", {}).get("templates", [])}
    if "file" in templates:
        drive(report, "helix python 'file'", argv, helix_fill(templates["file"], [fixture.script], fixture.work),
              fixture, "python", os.path.join(work, "helix-python.log"), "strata-dap", templates["file"]["request"])
    else:
        report.fail("helix: python has no 'file' template")
    templates = {t["name"]: t for t in languages.get("c", {}).get("debugger", {}).get("templates", [])}
    if "program" in templates:
        drive(report, "helix c 'program'", argv, helix_fill(templates["program"], [fixture.program], fixture.work),
              fixture, "native", os.path.join(work, "helix-native.log"), "strata-dap", templates["program"]["request"])
    else:
        report.fail("helix: c has no 'program' template")


def check_zed(report, adapter, attributes, fixture, work):
    with open(os.path.join(REPO, "editors", "zed", "debug.json"), encoding="utf-8") as f:
        scenarios = json.load(f)
    report.check(isinstance(scenarios, list) and scenarios, "zed: debug.json is an array of scenarios")
    zed_keys = {"label", "adapter", "build", "tcp_connection"}
    for s in scenarios:
        problems = [f"undeclared {k}" for k in undeclared(s, attributes, ignore=zed_keys)]
        if s.get("adapter") != "Strata" or not s.get("label"):
            problems.append("needs label and adapter \"Strata\"")
        report.check(not problems, f"zed: scenario {s.get('label')!r} uses attributes package.json declares",
                     "; ".join(problems))

    def fill(value):
        if isinstance(value, str):
            return (value.replace("$ZED_WORKTREE_ROOT", fixture.work).replace("$ZED_FILE", fixture.script))
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    by_label = {s.get("label"): s for s in scenarios}
    for label, kind in (("Strata: Python file", "python"), ("Strata: native program", "native")):
        s = by_label.get(label)
        if not s:
            report.fail(f"zed: no scenario {label!r}")
            continue
        config = {k: fill(v) for k, v in s.items() if k not in zed_keys}
        drive(report, f"zed {label!r}", [adapter, "--stdio"], config, fixture, kind,
              os.path.join(work, f"zed-{kind}.log"))


def main():
    report = Report()
    adapter = os.environ.get("STRATA_DAP") or os.path.join(REPO, "build", "release", "adapter", "strata-dap")
    if not (os.path.isfile(adapter) and os.access(adapter, os.X_OK)):
        print(f"FAIL: no strata-dap at {adapter}: build it, or set STRATA_DAP to one")
        return 1
    adapter = os.path.abspath(adapter)
    attributes = declared_attributes()
    keep = os.environ.get("STRATA_KEEP_WORK")
    work = tempfile.mkdtemp(prefix="strata-editors-")
    try:
        fixture = Fixture(work, report)
        for check in (check_nvim, check_emacs, check_helix, check_zed):
            try:
                check(report, adapter, attributes, fixture, work)
            except Exception as e:  # a crash of one part is a failure of that part, the others still run
                report.fail(f"{check.__name__}: {type(e).__name__}: {e}")
    finally:
        if keep or report.failures:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if report.failures:
        print(f"FAILED: {len(report.failures)} problem(s)")
        return 1
    if report.skips:
        print("SKIPPED: " + "; ".join(report.skips))
        return SKIP
    print("PASSED: every editor set-up checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
