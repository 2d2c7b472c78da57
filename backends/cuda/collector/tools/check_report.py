"""PASS/FAIL/SKIP lines and marked source lines, shared by the GPU check scripts."""

failed = False


def say(verdict, name, detail=""):
    global failed
    failed = failed or verdict == "FAIL"
    print(f"{verdict} {name}{': ' + detail if detail else ''}", flush=True)


def check(name, ok, detail):
    say("PASS" if ok else "FAIL", name, detail)


def marker_line(path, marker):
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if marker in line:
                return number
    raise SystemExit(f"{path}: no line marked {marker}")
