/* emit.c - assembles the translated file: the ABI header, the rewritten
 * program with the code placed before each function, and the per-unit
 * tables, initialiser, registration constructor and main thunk; also the
 * --dump-pragmas listing. */
#include "tu.h"

#include <stdlib.h>
#include <string.h>

static void main_thunk(tu *t, tr_sbuf *o)
{
    fninfo *f = &t->funcs.v[t->main_func];
    CXCursor c = t->nodes.v[f->node].c;
    CXType rt = clang_getResultType(clang_getCursorType(c));
    int nargs = clang_Cursor_getNumArguments(c);
    const char *args = nargs <= 0 ? "" : nargs == 1 ? "argc"
                       : nargs == 2 ? "argc, argv" : "argc, argv, envp";
    tr_sb_puts(o, "\n/* main: the runtime starts every node, then runs the "
               "program's main on node 0 */\n"
               "static int __ompdsm_main_thunk(int argc, char **argv, char **envp)\n{\n"
               "    (void)argc; (void)argv; (void)envp;\n");
    if (rt.kind == CXType_Void)
        tr_sb_printf(o, "    __ompdsm_user_main(%s);\n    return 0;\n}\n", args);
    else
        tr_sb_printf(o, "    return __ompdsm_user_main(%s);\n}\n", args);
    tr_sb_puts(o, "int main(int argc, char **argv, char **envp)\n{\n"
               "    return OMPDSM_main(argc, argv, envp, __ompdsm_main_thunk);\n}\n");
}


/* `# 12 "f.c" ...` or `#line 12 "f.c"` at s: 1 with its line and where its
 * file name starts and ends (still escaped). */
static int line_marker(const char *s, int *line, const char **fb,
                       const char **fe)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s++ != '#')
        return 0;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!strncmp(s, "line", 4))
        s += 4;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s < '0' || *s > '9')
        return 0;
    *line = (int)strtol(s, (char **)&s, 10);
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s != '"')
        return 0;
    *fb = ++s;
    while (*s && *s != '"' && *s != '\n')
        s += s[0] == '\\' && s[1] ? 2 : 1;
    if (*s != '"')
        return 0;
    *fe = s;
    return 1;
}

/* -g: every line break of ompcc's own code (outside TU_USER_BEGIN..END)
 * gets a `#line` that keeps the next line on the current one, so that
 * the generated lines of a construct belong to the line it starts on,
 * and a breakpoint on a later line of the user's or a `next` never lands
 * in them.  The user's lines count on as usual; the brackets go. */
static char *pin_generated(const char *s, size_t from)
{
    tr_sbuf o;
    int user = 0, line = 0, bol = 1;
    const char *fb = NULL, *fe = NULL;
    tr_sb_init(&o);
    tr_sb_putn(&o, s, from);
    for (s += from; *s; s++) {
        int n;
        const char *b, *e;
        if (*s == TU_USER_BEGIN || *s == TU_USER_END) {
            user = *s == TU_USER_BEGIN;
            continue;
        }
        if (bol && line_marker(s, &n, &b, &e)) {
            const char *nl = strchr(s, '\n');
            size_t len = nl ? (size_t)(nl + 1 - s) : strlen(s);
            for (size_t k = 0; k < len; k++)
                if (s[k] != TU_USER_BEGIN && s[k] != TU_USER_END)
                    tr_sb_putc(&o, s[k]);
            /* (the name points into s, which outlives the loop) */
            fb = b;
            fe = e;
            line = n;
            if (nl && memchr(s, TU_USER_BEGIN, len))
                user = 1;
            if (nl && memchr(s, TU_USER_END, len))
                user = 0;
            s += len - 1;
            bol = 1;
            continue;
        }
        tr_sb_putc(&o, *s);
        bol = *s == '\n';
        if (!bol)
            continue;
        if (user || !fb || s[-1] == '\\') {
            line++;
            continue;
        }
        /* the next line is a marker of its own: it says where it is */
        const char *q = s + 1;
        while (*q == TU_USER_BEGIN || *q == TU_USER_END)
            q++;
        const char *b2, *e2;
        if (line_marker(q, &n, &b2, &e2))
            continue;
        tr_sb_printf(&o, "#line %d \"%.*s\"\n", line, (int)(fe - fb), fb);
    }
    return tr_sb_take(&o);
}

char *tr_emit_unit(tu *t, const char *abi_header, const char *abi_path)
{
    tr_sbuf o;
    int i;
    size_t prog;
    tr_sb_init(&o);
    /* code that goes before each function definition */
    for (i = 0; i < t->funcs.n; i++) {
        fninfo *f = &t->funcs.v[i];
        tr_sbuf s;
        if (!f->pre.n && !f->pre_decls.n)
            continue;
        tr_sb_init(&s);
        tr_sb_puts(&s, "\n/* ompdsm: generated for ");
        tr_sb_puts(&s, f->name);
        tr_sb_puts(&s, " */\n");
        if (f->pre_decls.n)
            tr_sb_puts(&s, f->pre_decls.s);
        if (f->pre.n)
            tr_sb_puts(&s, f->pre.s);
        tr_edit_add(t, f->b, f->b, tr_sb_take(&s), -100);
    }
    if (abi_header) { /* as a system header: no warnings about it */
        tr_sb_puts(&o, "# 1 ");
        tr_sb_cstring(&o, abi_path);
        tr_sb_puts(&o, " 3\n");
        tr_sb_puts(&o, abi_header);
        if (o.n && o.s[o.n - 1] != '\n')
            tr_sb_putc(&o, '\n');
    }
    prog = o.n;
    tr_render(t, 0, t->len, &o);

    tr_sb_puts(&o, "\n#line 1 \"<ompdsm generated>\"\n");
    if (t->nglobals)
        tr_sb_printf(&o, "/* the shared globals this unit defines */\n"
                      "static OMPDSM_global __ompdsm_globals[] = {\n%s};\n",
                     t->globals_tab.s);
    if (t->nglobals)
        tr_sb_printf(&o, "/* where the user declared them */\n"
                      "static const OMPDSM_srcpos __ompdsm_global_decls[] = {\n%s};\n",
                     t->global_decls.s);
    if (t->init_fn.n)
        tr_sb_printf(&o, "/* their initial values, stored once the runtime has "
                      "allocated them */\nstatic void __ompdsm_init(void)\n{%s\n}\n",
                     t->init_fn.s);
    if (t->tp_init_fn.n)
        tr_sb_printf(&o, "#line 1 \"<ompdsm generated>\"\n"
                      "/* the same for threadprivate variables, on each "
                      "thread the runtime starts */\n"
                      "static void __ompdsm_tp_init(void)\n{%s\n}\n",
                     t->tp_init_fn.s);
    tr_sb_puts(&o, "#line 1 \"<ompdsm generated>\"\n");
    if (t->regions.n) {
        /* in source order (they were outlined innermost first) */
        tr_sb_puts(&o, "static OMPDSM_region *__ompdsm_regions[] = {");
        for (i = t->regions.n - 1; i >= 0; i--)
            tr_sb_printf(&o, "%s&%s_desc", i < t->regions.n - 1 ? ", " : "",
                         t->regions.v[i]);
        tr_sb_puts(&o, "};\n");
    }
    if (t->criticals.n) {
        tr_sb_puts(&o, "static const char *const __ompdsm_criticals[] = {");
        for (i = 0; i < t->criticals.n; i++) {
            if (i)
                tr_sb_puts(&o, ", ");
            tr_sb_cstring(&o, t->criticals.v[i]);
        }
        tr_sb_puts(&o, "};\n");
    }
    tr_sb_puts(&o, "static OMPDSM_unit __ompdsm_unit = {OMPDSM_ABI_VERSION, ");
    tr_sb_cstring(&o, tr_srcmap_main_file(&t->map));
    tr_sb_printf(&o, ",\n    %s, %d, %s,\n    %s, %d,\n    %s, %d, 0};\n",
                 t->nglobals ? "__ompdsm_globals" : "0", t->nglobals,
                 t->init_fn.n ? "__ompdsm_init" : "0",
                 t->regions.n ? "__ompdsm_regions" : "0", t->regions.n,
                 t->criticals.n ? "__ompdsm_criticals" : "0", t->criticals.n);
    tr_sb_puts(&o, "__attribute__((constructor)) static void __ompdsm_register(void)\n"
                "{\n    OMPDSM_register_unit(&__ompdsm_unit);\n");
    if (t->nglobals)
        tr_sb_puts(&o, "    OMPDSM_global_decls(&__ompdsm_unit, __ompdsm_global_decls);\n");
    if (t->tp_init_fn.n)
        tr_sb_puts(&o, "    OMPDSM_thread_init(__ompdsm_tp_init);\n");
    tr_sb_puts(&o, "}\n");
    if (t->main_func >= 0 && t->funcs.v[t->main_func].body >= 0)
        main_thunk(t, &o);
    if (t->mark_user) {
        char *pinned = pin_generated(o.s, prog);
        tr_sb_free(&o);
        return pinned;
    }
    return tr_sb_take(&o);
}

void tr_emit_dump_pragmas(tu *t, tr_sbuf *o)
{
    int i, l;
    for (i = 0; i < t->cons.n; i++) {
        construct *c = &t->cons.v[i];
        const char *file;
        int line, bl, el;
        if (c->combined == 2)
            continue;
        tr_srcmap_presumed(&t->map, c->p->begin, &file, &line, NULL);
        tr_sb_printf(o, "%s:%d: ", file, line);
        tr_pragma_format(c->p, t->text, o);
        tr_sb_putc(o, '\n');
        if (c->combined == 1)
            c = &t->cons.v[i + 1];
        if (c->se > c->sb) {
            tr_srcmap_presumed(&t->map, c->sb, NULL, &bl, NULL);
            tr_srcmap_presumed(&t->map, c->se - 1, NULL, &el, NULL);
            tr_sb_printf(o, "    block: lines %d-%d%s\n", bl, el,
                         c->stmt < 0 ? " (a construct)" : "");
        }
        if (c->parent >= 0 && t->cons.v[c->parent].combined != 1)
            tr_sb_printf(o, "    inside: %s at line %d\n",
                         tr_pragma_dir_name(t->cons.v[c->parent].dir), t->cons.v[c->parent].line);
        for (l = 0; l < c->nloops; l++) {
            loopinfo *L = &c->loops[l];
            const char *cmp = L->cmp == '<' ? "<" : L->cmp == 'l' ? "<="
                              : L->cmp == '>' ? ">" : ">=";
            tr_sb_printf(o, "    loop %d: %s%s = %.*s; %s %s %.*s; step %s%.*s%s\n", l,
                         L->declared ? "(declared) " : "", t->vars.v[L->var].name,
                         (int)(L->lb.e - L->lb.b), t->text + L->lb.b,
                         t->vars.v[L->var].name, cmp, (int)(L->ub.e - L->ub.b),
                         t->text + L->ub.b, L->step_neg ? "-" : "",
                         L->step.e > L->step.b ? (int)(L->step.e - L->step.b) : 1,
                         L->step.e > L->step.b ? t->text + L->step.b : "1",
                         L->is_ptr ? " (pointer)" : L->is_unsigned ? " (unsigned)" : "");
        }
        if (c->dir == DIR_SECTIONS)
            tr_sb_printf(o, "    sections: %d\n", c->sections.n);
    }
}
