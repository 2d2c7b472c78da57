"""The bytecode rewrite behind 3.11's written-in breakpoints (_codepatch.py): rewrite(code, lines,
hook) returns `code` with a call of hook(line) where each of `lines` is entered, its jumps,
exception table and location table moved with the instructions; the decoding of 3.11's
instructions and the encoding of its exception and location tables are here too."""
import dis
import opcode
import sys

_OPS = opcode.opmap
_CACHES = getattr(opcode, "_inline_cache_entries", None)
SUPPORTED = sys.version_info[:2] == (3, 11) and _CACHES is not None

if SUPPORTED:
    EXTENDED_ARG = _OPS["EXTENDED_ARG"]
    RESUME = _OPS["RESUME"]
    PUSH_EXC_INFO = _OPS["PUSH_EXC_INFO"]
    KW_NAMES = _OPS["KW_NAMES"]
    PRECALL = _OPS["PRECALL"]
    CALL = _OPS["CALL"]
    PUSH_NULL = _OPS["PUSH_NULL"]
    LOAD_CONST = _OPS["LOAD_CONST"]
    POP_TOP = _OPS["POP_TOP"]
    JUMP_FORWARD = _OPS["JUMP_FORWARD"]
    SEND = _OPS["SEND"]
    JREL = frozenset(dis.hasjrel)
    BACKWARD = frozenset(op for op in JREL if "BACKWARD" in opcode.opname[op])
    NO_FALLTHROUGH = frozenset(_OPS[n] for n in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                                                 "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"))
    NO_BEFORE = frozenset((KW_NAMES, PRECALL))  # never between these and their CALL
    CALL_STACK = 3  # what the inserted call needs on the value stack at most

class _Ins:
    __slots__ = ("start", "op", "arg", "ext", "ncache", "line", "upos", "target")


def _decode(code):
    raw = code.co_code
    positions = list(code.co_positions())
    n = len(raw) // 2
    out = []
    i = 0
    while i < n:
        ins = _Ins()
        ins.start = i
        arg = 0
        op = raw[2 * i]
        while op == EXTENDED_ARG:
            arg = (arg | raw[2 * i + 1]) << 8
            i += 1
            op = raw[2 * i]
        arg |= raw[2 * i + 1]
        ins.op, ins.arg, ins.ext = op, arg, i - ins.start
        ins.ncache = _CACHES[op]
        ins.line = positions[i][0]
        i += 1 + ins.ncache
        ins.upos = positions[ins.start:i]
        ins.target = None
        if op in JREL:
            ins.target = i - arg if op in BACKWARD else i + arg
        out.append(ins)
    return out, positions


def _read_varint(data, i):
    b = data[i]
    i += 1
    val = b & 63
    while b & 64:
        b = data[i]
        i += 1
        val = (val << 6) | (b & 63)
    return val, i


def parse_exception_table(data):
    """[(start, end, target, depth, lasti)] in code units, end exclusive."""
    out = []
    i = 0
    while i < len(data):
        start, i = _read_varint(data, i)
        length, i = _read_varint(data, i)
        target, i = _read_varint(data, i)
        dl, i = _read_varint(data, i)
        out.append((start, start + length, target, dl >> 1, dl & 1))
    return out


def _write_exc_item(out, value, msb):
    for shift in (24, 18, 12, 6):
        if value >= 1 << shift:
            out.append(((value >> shift) & 63) | 64 | msb)
            msb = 0
    out.append((value & 63) | msb)


def encode_exception_table(entries):
    out = bytearray()
    for start, end, target, depth, lasti in entries:
        _write_exc_item(out, start, 128)
        _write_exc_item(out, end - start, 0)
        _write_exc_item(out, target, 0)
        _write_exc_item(out, (depth << 1) | lasti, 0)
    return bytes(out)


def _varint(out, val):
    while val >= 64:
        out.append(64 | (val & 63))
        val >>= 6
    out.append(val)


def _svarint(out, val):
    _varint(out, ((-val) << 1) | 1 if val < 0 else val << 1)


def encode_locations(positions, firstlineno):
    """3.11's location table for one (line, end_line, column, end_column) per code unit."""
    out = bytearray()
    prev = firstlineno
    i, n = 0, len(positions)
    while i < n:
        pos = positions[i]
        j = i + 1
        while j < n and j - i < 8 and positions[j] == pos:
            j += 1
        size = j - i - 1
        line, end_line, col, end_col = pos
        if line is None:
            out.append(0x80 | (15 << 3) | size)
        elif col is None or end_col is None or end_line is None:
            out.append(0x80 | (13 << 3) | size)
            _svarint(out, line - prev)
            prev = line
        else:
            out.append(0x80 | (14 << 3) | size)
            _svarint(out, line - prev)
            _varint(out, end_line - line)
            _varint(out, col + 1)
            _varint(out, end_col + 1)
            prev = line
        i = j
    return bytes(out)


def _ext_for(arg):
    return 0 if arg < 1 << 8 else 1 if arg < 1 << 16 else 2 if arg < 1 << 24 else 3


class _Item:
    __slots__ = ("op", "arg", "ext", "ncache", "label", "backward", "upos", "off")

    def __init__(self, op, arg, ncache, upos, ext=0, label=None, backward=False):
        self.op, self.arg, self.ncache, self.upos = op, arg, ncache, upos
        self.ext, self.label, self.backward = ext, label, backward
        self.off = 0


def _plan(ins, lines):
    """Where calls go: {instruction index: whether a fall-through must jump over the call},
    the jumps that must land past the call, and the lines that got a call."""
    first = next((k for k, x in enumerate(ins) if x.op == RESUME), None)
    if first is None:
        return None
    by_start = {x.start: k for k, x in enumerate(ins)}
    jumps_to = {}
    for j, x in enumerate(ins):
        if x.target is not None:
            k = by_start.get(x.target)
            if k is None:
                return None
            jumps_to.setdefault(k, []).append(j)

    def line_before(p):
        return None if p <= first or ins[p].op == PUSH_EXC_INFO else ins[p].line

    blocks, past, covered = {}, set(), set()
    for k in range(first + 1, len(ins)):
        x = ins[k]
        line = x.line
        if line not in lines or x.op in (RESUME, PUSH_EXC_INFO) or ins[k - 1].op in NO_BEFORE:
            continue
        fall = None if ins[k - 1].op in NO_FALLTHROUGH else line_before(k - 1) != line
        # A backward jump re-enters its line, except the one back to SEND of `yield from`/`await`.
        from_jumps = {j: (ins[j].op in BACKWARD and x.op != SEND) or line_before(j) != line
                      for j in jumps_to.get(k, ())}
        if not (fall or any(from_jumps.values())):
            continue
        blocks[k] = fall is False
        past.update(j for j, fires in from_jumps.items() if not fires)
        covered.add(line)
    return first, blocks, past, covered, by_start


def rewrite(code, lines, hook, consts=None):
    """`code` with hook(line) where each of `lines` is entered, or None where that cannot be done
    for every one of them (the caller arms such code the traced way)."""
    if not SUPPORTED:
        return None
    ins, positions = _decode(code)
    plan = _plan(ins, lines)
    if plan is None:
        return None
    first, blocks, past, covered, by_start = plan
    # A line only the function's prologue has (the `def` line at RESUME) is never reported by
    # tracing either; every other line must get its call.
    reported = {x.line for x in ins[first + 1:] if x.op not in (RESUME, PUSH_EXC_INFO)}
    if covered != set(lines) & reported:
        return None
    consts = list(code.co_consts if consts is None else consts)
    hook_index = len(consts)
    consts.append(hook)
    line_index = {}
    for line in sorted(covered):
        line_index[line] = len(consts)
        consts.append(line)

    items, labels = [], {}  # labels: ("i", k) the instruction, ("b", k) its call
    for k, x in enumerate(ins):
        if k in blocks:
            pos = [x.upos[x.ext]]
            if blocks[k]:
                items.append(_Item(JUMP_FORWARD, 0, 0, pos, label=("i", k)))
            labels[("b", k)] = len(items)
            li = line_index[x.line]
            items.append(_Item(PUSH_NULL, 0, 0, pos))
            items.append(_Item(LOAD_CONST, hook_index, 0, pos, ext=_ext_for(hook_index)))
            items.append(_Item(LOAD_CONST, li, 0, pos, ext=_ext_for(li)))
            items.append(_Item(PRECALL, 1, _CACHES[PRECALL], pos))
            items.append(_Item(CALL, 1, _CACHES[CALL], pos))
            items.append(_Item(POP_TOP, 0, 0, pos))
        labels[("i", k)] = len(items)
        label = None
        if x.target is not None:
            t = by_start[x.target]
            label = ("b", t) if t in blocks and k not in past else ("i", t)
        items.append(_Item(x.op, x.arg, x.ncache, x.upos, ext=x.ext, label=label, backward=x.op in BACKWARD))

    for it in items:
        if it.label is None:
            it.ext = max(it.ext, _ext_for(it.arg))
    while True:
        off = 0
        for it in items:
            it.off = off
            off += it.ext + 1 + it.ncache
        total = off
        grew = False
        for it in items:
            if it.label is None:
                continue
            nxt = it.off + it.ext + 1 + it.ncache
            dest = items[labels[it.label]].off
            arg = nxt - dest if it.backward else dest - nxt
            if arg < 0:
                return None
            it.arg = arg
            need = _ext_for(arg)
            if need > it.ext:
                it.ext = need
                grew = True
        if not grew:
            break

    raw = bytearray()
    new_pos = []
    for it in items:
        for e in range(it.ext, 0, -1):
            raw += bytes((EXTENDED_ARG, (it.arg >> (8 * e)) & 0xFF))
        raw += bytes((it.op, it.arg & 0xFF))
        raw += b"\0\0" * it.ncache
        units = it.ext + 1 + it.ncache
        # The position of each unit: an instruction's own, with an EXTENDED_ARG that it did not
        # have before taking the position of its first unit.
        pos = list(it.upos)
        if len(pos) < units:
            pos = [pos[0]] * (units - len(pos)) + pos
        elif len(pos) > units:
            pos = pos[len(pos) - units:]
        new_pos.extend(pos)

    def at(unit, call_first):
        if unit == len(positions):
            return total
        k = by_start.get(unit)
        if k is None:
            raise ValueError
        if call_first and k in blocks:
            return items[labels[("i", k)] - (7 if blocks[k] else 6)].off
        return items[labels[("i", k)]].off

    try:
        table = [(at(s, True), at(e, True), at(t, False), d, lasti)
                 for s, e, t, d, lasti in parse_exception_table(code.co_exceptiontable)]
    except ValueError:
        return None
    try:
        new = code.replace(co_code=bytes(raw), co_consts=tuple(consts),
                           co_linetable=encode_locations(new_pos, code.co_firstlineno),
                           co_exceptiontable=encode_exception_table(table),
                           co_stacksize=code.co_stacksize + CALL_STACK)
    except (ValueError, TypeError):
        return None
    # What was written must read back as meant before any frame runs it.
    if list(new.co_positions()) != new_pos or parse_exception_table(new.co_exceptiontable) != table:
        return None
    return new
