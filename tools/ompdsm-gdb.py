# ompdsm-gdb.py - gdb extension: the program's own names for variables ompcc
# moved into the shared heap, and a note on values of pages a node holds
# no valid copy of (docs/debugging.md).
#
# ompcc turns a shared local `s` into a pointer __ompdsm_l_s into the
# shared heap, a global `g` into __ompdsm_g_g, a function's static `v`
# into __ompdsm_s_FUNC_v, and inside an outlined region a shared `s` is
# reached through __ompdsm_sh_s; so `print s` finds no symbol.  This
# replaces `print` (and `p`, `inspect`): every identifier of the
# expression that names no visible variable but has such a pointer is read
# through it, and the rest goes to gdb's own evaluation (`call`, which
# prints exactly as `print` does, into the value history).  Names follow
# C's scopes from the selected frame, so a static of another file (libm
# has an `a`) does not hide a shared global.  gdb reads past the page
# protections the shared memory works with: a value on a page this node
# holds no valid copy of is printed with a note saying it is an old copy.
#
#   ompdsm-expr EXPR     shows the expression as evaluated
#   set ompdsm-names off restores gdb's own print
#
# Loaded by `source`, or automatically beside libompdsm (the build installs
# it as libompdsm.so.*-gdb.py; gdb asks for add-auto-load-safe-path).
import re

import gdb

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_enabled = True


def _frame():
    try:
        return gdb.selected_frame()
    except gdb.error:
        return None


def _defines(block, names):
    """The first of names that block itself declares as a variable,
    function or enumerator (a struct tag or typedef may share a variable's
    name), or None."""
    found = {sym.name for sym in block
             if sym.name in names and sym.addr_class != gdb.SYMBOL_LOC_TYPEDEF}
    return next((n for n in names if n in found), None)


def _lookup(name, block):
    try:
        if block is not None:
            return gdb.lookup_symbol(name, block)[0]
        return gdb.lookup_global_symbol(name)
    except (gdb.error, RuntimeError):
        return None


def _user_function(frame):
    """The user's function the frame runs: main for __ompdsm_region_main_14
    and __ompdsm_user_main, the name itself otherwise."""
    if frame is None or frame.name() is None:
        return None
    name = frame.name()
    m = re.match(r"__ompdsm_(?:region|task)_(.*)_\d+$", name)
    if m:
        return m.group(1)
    if name == "__ompdsm_user_main":
        return "main"
    return name


def shared_pointer(name, frame=None):
    """The pointer through which the program reaches its variable `name`
    in frame, or None when gdb sees `name` itself (or nothing at all).

    C's scopes decide, not gdb's lookup: gdb falls back on a file-scope
    static of any other file (libm's `a`, say) when the frame sees no
    `name`, and that must not hide the program's shared global."""
    if frame is None:
        frame = _frame()
    try:
        block = frame.block() if frame is not None else None
    except RuntimeError:
        block = None
    local = ("__ompdsm_sh_" + name, "__ompdsm_l_" + name)
    # the function's blocks, innermost first
    while block is not None and not block.is_static and not block.is_global:
        hit = _defines(block, (name,) + local)
        if hit:
            return None if hit == name else hit
        block = block.superblock
    fn = _user_function(frame)
    if fn and _lookup("__ompdsm_s_%s_%s" % (fn, name), block) is not None:
        return "__ompdsm_s_%s_%s" % (fn, name)
    if block is not None and (_defines(block, (name,)) or
                              _defines(block.global_block, (name,))):
        return None
    if block is None and _lookup(name, None) is not None:
        return None
    if _lookup("__ompdsm_g_" + name, block) is not None:
        return "__ompdsm_g_" + name
    return None


def rewrite(expr):
    """expr with each of the program's moved variables read through its
    pointer; strings, character constants, members (after . or ->) and
    convenience variables ($x) are left alone."""
    frame = _frame()
    out, i, n = [], 0, len(expr)
    while i < n:
        ch = expr[i]
        if ch in "\"'":
            j = i + 1
            while j < n and expr[j] != ch:
                j += 2 if expr[j] == "\\" else 1
            out.append(expr[i:j + 1])
            i = j + 1
            continue
        m = _IDENT.match(expr, i)
        if not m or (i and (expr[i - 1].isalnum() or expr[i - 1] in "_$")):
            out.append(ch)
            i += 1
            continue
        word = m.group(0)
        before = expr[:i].rstrip()
        member = before.endswith(".") or before.endswith("->")
        ptr = None if member else shared_pointer(word, frame)
        out.append("(*%s)" % ptr if ptr else word)
        i = m.end()
    return "".join(out)


def _split(arg):
    """print's '-option ... --' and '/FMT' prefixes, and the expression."""
    arg = arg.strip()
    opts = ""
    if arg.startswith("-"):
        k = arg.find(" -- ")
        if k >= 0:
            opts, arg = arg[:k + 4], arg[k + 4:]
    fmt = ""
    if arg.startswith("/"):
        m = re.match(r"/\S*\s*", arg)
        fmt, arg = m.group(0).rstrip(), arg[m.end():]
    return opts, fmt, arg


def _no_access(lo, hi):
    """The first address in [lo, hi) that the inferior's mappings give no
    read access (a shared page this node holds no valid copy of), or None.
    Only a live local process has /proc maps to read."""
    inf = gdb.selected_inferior()
    conn = getattr(inf, "connection", None)
    if inf.pid <= 0 or (conn is not None and conn.type != "native"):
        return None
    try:
        with open("/proc/%d/maps" % inf.pid) as f:
            for line in f:
                rng, perms = line.split()[:2]
                start, end = (int(x, 16) for x in rng.split("-"))
                if start < hi and end > lo and perms[0] != "r":
                    return max(start, lo)
    except OSError:
        return None
    return None


def _note_invalid(value):
    """gdb reads memory past page protections, so a page the DSM has
    invalidated on this node shows the node's old copy: say so beside
    the value instead of letting it pass for the current one."""
    try:
        addr = value.address
        if addr is None:
            return
        lo = int(addr)
        bad = _no_access(lo, lo + max(value.type.sizeof, 1))
    except (gdb.error, RuntimeError, ValueError):
        return
    if bad is not None:
        gdb.write("(ompdsm: this node holds no valid copy of the page at "
                  "0x%x: the value is its old copy, current only on the node "
                  "that wrote it or after this node reads it)\n" % bad)


class Print(gdb.Command):
    """Print the value of an expression, reading variables that ompcc moved
    into the shared heap by their own names (ompdsm-gdb.py).
Usage: print [[OPTION]... --] [/FMT] [EXP]"""

    def __init__(self, name):
        super().__init__(name, gdb.COMMAND_DATA, gdb.COMPLETE_EXPRESSION)

    def invoke(self, arg, from_tty):
        opts, fmt, expr = _split(arg)
        if not expr.strip():
            expr = "$"
        if _enabled:
            expr = rewrite(expr)
        count = gdb.history_count()
        try:
            gdb.execute("call%s %s%s" % (fmt, opts, expr), from_tty)
        except gdb.error as e:
            raise gdb.GdbError(str(e)) from None
        if gdb.history_count() > count:
            _note_invalid(gdb.history(0))


class Expr(gdb.Command):
    """Show an expression as ompdsm-gdb.py evaluates it: ompdsm-expr EXP"""

    def __init__(self):
        super().__init__("ompdsm-expr", gdb.COMMAND_DATA,
                         gdb.COMPLETE_EXPRESSION)

    def invoke(self, arg, from_tty):
        gdb.write(rewrite(arg) + "\n")


class Names(gdb.Parameter):
    """Whether print reads ompcc's moved variables by the program's names."""
    set_doc = "Set whether print maps the program's names (ompdsm)."
    show_doc = "Show whether print maps the program's names (ompdsm)."

    def __init__(self):
        super().__init__("ompdsm-names", gdb.COMMAND_DATA, gdb.PARAM_BOOLEAN)
        self.value = True

    def get_set_string(self):
        global _enabled
        _enabled = bool(self.value)
        return ""


for _name in ("print", "p", "inspect"):
    Print(_name)
Expr()
Names()
