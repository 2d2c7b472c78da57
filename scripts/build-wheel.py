#!/usr/bin/python3
"""Builds Strata's wheel from a build directory: `pip install` of that one file puts `strata`,
`strata-dap` and the Python agent into a virtual environment.

    scripts/build-wheel.py [--build-dir build/release] [--out build/packages]

It installs the build (`cmake --install --strip`) into the wheel's `strata/_prefix/`: the two
programs with the shared libraries they load carried (lib/strata/deps, found through their
$ORIGIN-relative RPATH), the GPU collector and the agent the adapter hands to the programs it
launches (lib/strata/python: a folder holding only the agent, so a launch's PYTHONPATH names
nothing else of the environment). The agent is also the wheel's top-level `strata` package, so
`python -m strata --listen 5678 train.py` works in the environment. `strata` and `strata-dap`
on the environment's PATH start the programs in `_prefix/bin`.

One wheel serves every CPython the build found (the agent's core is built for each): tagged
py3-none-manylinux_2_36_x86_64, since the programs need glibc 2.36 or newer. Built with the
packaging tools Debian ships (python3-build, python3-setuptools, python3-wheel), offline.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SETUP_PY = '''\
from setuptools import setup
from wheel.bdist_wheel import bdist_wheel


class StrataWheel(bdist_wheel):
    """Platform-specific (it carries programs and shared libraries), for any CPython 3."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        return "py3", "none", "manylinux_2_36_x86_64"


setup(cmdclass={"bdist_wheel": StrataWheel})
'''

PYPROJECT = '''\
[build-system]
requires = ["setuptools", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "strata-debugger"
version = "{version}"
description = "Strata: one debugger for Python, C/C++ and CUDA programs (DAP adapter, CLI and Python agent)"
readme = "README.md"
requires-python = ">=3.10"
classifiers = ["Operating System :: POSIX :: Linux", "Programming Language :: Python :: 3"]

[project.scripts]
strata = "strata._commands:strata"
strata-dap = "strata._commands:strata_dap"

[tool.setuptools]
packages = ["strata"]
include-package-data = false

[tool.setuptools.package-data]
strata = ["**/*"]
'''

COMMANDS = '''\
"""The `strata` and `strata-dap` commands of Strata's wheel: they run the programs it carries."""
import os
import sys

_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_prefix", "bin")


def _run(name):
    path = os.path.join(_BIN, name)
    try:
        os.execv(path, [name] + sys.argv[1:])
    except OSError as e:
        sys.exit(f"{name}: cannot run {path}: {e.strerror} (reinstall the strata-debugger wheel)")


def strata():
    _run("strata")


def strata_dap():
    _run("strata-dap")
'''


def project_version(build_dir):
    with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
        m = re.search(r"^CMAKE_PROJECT_VERSION:STATIC=(\S+)$", f.read(), re.M)
    return m.group(1) if m else "0.0.0"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--out", default=os.path.join(REPO, "build", "packages"))
    ap.add_argument("--keep-stage", help="stage the wheel's tree here and keep it")
    args = ap.parse_args()
    build_dir = os.path.abspath(args.build_dir)
    for need in ("adapter/strata-dap", "adapter/cli/strata", "backends/python/python/strata/__main__.py"):
        if not os.path.exists(os.path.join(build_dir, need)):
            sys.exit(f"build-wheel: {need} is missing in {build_dir} (build the strata-dap, strata and "
                     "strata_python_package targets first)")
    stage = os.path.abspath(args.keep_stage) if args.keep_stage else tempfile.mkdtemp(prefix="strata-wheel-")
    try:
        shutil.rmtree(stage, ignore_errors=True)
        pkg = os.path.join(stage, "strata")
        prefix = os.path.join(pkg, "_prefix")
        subprocess.run(["cmake", "--install", build_dir, "--prefix", prefix, "--strip", "--component", "strata"],
                       check=True, stdout=subprocess.DEVNULL)
        shutil.rmtree(os.path.join(prefix, "share"), ignore_errors=True)
        agent = os.path.join(prefix, "lib", "strata", "python", "strata")
        for name in os.listdir(agent):
            src = os.path.join(agent, name)
            (shutil.copytree if os.path.isdir(src) else shutil.copy2)(src, os.path.join(pkg, name))
        with open(os.path.join(pkg, "_commands.py"), "w") as f:
            f.write(COMMANDS)
        with open(os.path.join(stage, "setup.py"), "w") as f:
            f.write(SETUP_PY)
        with open(os.path.join(stage, "pyproject.toml"), "w") as f:
            f.write(PYPROJECT.format(version=project_version(build_dir)))
        shutil.copy2(os.path.join(REPO, "README.md"), stage)
        out = os.path.abspath(args.out)
        os.makedirs(out, exist_ok=True)
        # Debian's interpreter has the packaging tools (scripts/setup.sh installs them).
        builder = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        r = subprocess.run([builder, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, stage],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stdout[-4000:] + r.stderr[-4000:])
            sys.exit("build-wheel: the wheel build failed (python3-build, python3-setuptools and python3-wheel "
                     "are needed: scripts/setup.sh installs them)")
        wheel = re.findall(r"Successfully built (\S+\.whl)", r.stdout)
        path = os.path.join(out, wheel[-1]) if wheel else out
        print(f"{path} ({os.path.getsize(path) / 1e6:.1f} MB)" if wheel else path)
    finally:
        if not args.keep_stage:
            shutil.rmtree(stage, ignore_errors=True)


if __name__ == "__main__":
    main()
