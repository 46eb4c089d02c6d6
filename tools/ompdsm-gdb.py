# ompdsm-gdb.py - gdb extension: the program's own names for variables ompcc
# moved into the shared heap (docs/debugging.md).
#
# ompcc turns a shared local `s` into a pointer __ompdsm_l_s into the
# shared heap, a global `g` into __ompdsm_g_g, a function's static `v`
# into __ompdsm_s_FUNC_v, and inside an outlined region a shared `s` is
# reached through __ompdsm_sh_s; so `print s` finds no symbol.  This
# replaces `print` (and `p`, `inspect`): every identifier of the
# expression that names no visible variable but has such a pointer is read
# through it, and the rest goes to gdb's own evaluation (`call`, which
# prints exactly as `print` does, into the value history).
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


def _visible(name, frame):
    """True when gdb already resolves name (a variable, function or enum)."""
    try:
        if frame is not None:
            sym = gdb.lookup_symbol(name, frame.block())[0]
        else:
            sym = gdb.lookup_symbol(name)[0]
    except (gdb.error, RuntimeError):
        sym = None
    if sym is not None:
        return True
    return gdb.lookup_global_symbol(name) is not None or \
        gdb.lookup_static_symbol(name) is not None


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
    in frame, or None when gdb sees `name` itself (or nothing at all)."""
    if frame is None:
        frame = _frame()
    if _visible(name, frame):
        return None
    cands = ["__ompdsm_sh_" + name, "__ompdsm_l_" + name]
    fn = _user_function(frame)
    if fn:
        cands.append("__ompdsm_s_%s_%s" % (fn, name))
    cands.append("__ompdsm_g_" + name)
    for c in cands:
        if _visible(c, frame):
            return c
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
        try:
            gdb.execute("call%s %s%s" % (fmt, opts, expr), from_tty)
        except gdb.error as e:
            raise gdb.GdbError(str(e)) from None


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
