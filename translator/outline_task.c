/* outline_task.c - a task becomes a function and a data struct, as a
 * parallel region does (outline.c), or runs in place.
 *
 * A task's block becomes a static function __ompdsm_task_<func>_<line>_<k>
 * and its data environment a struct the runtime copies into a descriptor
 * (OMPDSM_task), so that any node can run it later: the values of its
 * private and firstprivate variables, and the addresses of the shared
 * ones.  Those must be valid on every node: globals and function statics
 * (shared heap, named the same everywhere), locals shared through a
 * parallel region or promoted to the shared heap (a pointer captured by
 * value, __ompdsm_sh_x / __ompdsm_l_x), and read-only values a region
 * copied.  A task that shares anything else (a private variable of the
 * encountering thread's stack), or whose variables have types declared
 * in the function or of variable size, is not outlined: it runs in
 * place, undeferred, as before. */
#include "tu.h"

#include <stdlib.h>
#include <string.h>

typedef struct task_gen {
    tr_members mn;
    tr_sbuf mem, fill, pro;
    VEC(int) seen;
    int ok;
} task_gen;

static int task_local_type(tu *t, int v)
{
    const char *why;
    return tr_ast_var_type_is_local(t, v, &why) || tr_ast_var_vm(t, v) != VM_NONE;
}

/* private and firstprivate variables of the task */
static void task_privates(tu *t, int k, task_gen *g)
{
    construct *c = &t->cons.v[k];
    int i;
    for (i = 0; i < c->priv.n && g->ok; i++) {
        int v = c->priv.v[i];
        char *ty;
        VEC_PUSH(g->seen, v);
        if (task_local_type(t, v)) {
            g->ok = 0;
            break;
        }
        ty = tr_outline_file_type(t, v, c->p->dir_off);
        c = &t->cons.v[k];
        tr_sb_printf(&g->pro, "  %s %s; /* private */\n", ty, t->vars.v[v].name);
        free(ty);
    }
    for (i = 0; i < c->fpriv.n + c->task_fp.n && g->ok; i++) {
        int v = i < c->fpriv.n ? c->fpriv.v[i] : c->task_fp.v[i - c->fpriv.n];
        const char *vn = t->vars.v[v].name;
        char *m, *o, *ty;
        if (tr_con_in_list(g->seen.v, g->seen.n, v))
            continue;
        VEC_PUSH(g->seen, v);
        if (task_local_type(t, v)) {
            g->ok = 0;
            break;
        }
        m = tr_outline_member(&g->mn, vn);
        o = tr_outline_outer(t, k, v);
        ty = tr_outline_file_type_q(t, v, t->cons.v[k].p->dir_off, 1);
        tr_sb_printf(&g->mem, "    %s %s; /* firstprivate */\n", ty, m);
        tr_sb_printf(&g->fill,
                     "  __builtin_memcpy(&__ompdsm_fr.%s, &(%s), sizeof __ompdsm_fr.%s);\n",
                     m, o, m);
        tr_sb_printf(&g->pro, "  __typeof__(__ompdsm_f->%s) %s; __builtin_memcpy(&%s, "
                     "&__ompdsm_f->%s, sizeof %s);\n", m, vn, vn, m, vn);
        free(ty);
        free(o);
        c = &t->cons.v[k];
    }
}

/* Does the walk of v from `start` pass construct k without stopping
 * inside it (the task shares v)? */
static int task_shares(tu *t, int k, int v, int start)
{
    var *vv = &t->vars.v[v];
    int at;
    for (at = start; at >= 0 && at != k; at = t->cons.v[at].parent) {
        if (vv->kind == VK_LOCAL && vv->decl_con >= 0 && tr_con_contains(t, at, vv->decl_con))
            return 0;
        if (tr_con_privatizes(&t->cons.v[at], v))
            return 0;
    }
    if (at != k)
        return 0;
    if (vv->kind == VK_LOCAL && vv->decl_con >= 0 && tr_con_contains(t, k, vv->decl_con))
        return 0;
    return !tr_con_privatizes(&t->cons.v[k], v);
}

/* a shared variable the block names: what its name needs captured */
static void task_shared(tu *t, int k, int v, task_gen *g)
{
    var *vv = &t->vars.v[v];
    char *n, *m, *ty;
    int stop, at;
    if (vv->rewritten || vv->kind == VK_GLOBAL || vv->kind == VK_STATIC ||
        vv->kind == VK_SYSTEM || vv->threadprivate || vv->tls)
        return; /* the same name on every tr_node */
    if (task_local_type(t, v)) {
        g->ok = 0;
        return;
    }
    n = tr_sharing_name(t, v, t->cons.v[k].parent, t->cons.v[k].b);
    if (!n) {
        g->ok = 0;
        return;
    }
    if (!strncmp(n, "(*__ompdsm_sh_", 14) || !strncmp(n, "(*__ompdsm_l_", 13)) {
        /* a pointer into the shared heap, valid everywhere */
        char *p = tr_xstrdup(n + 2);
        p[strlen(p) - 1] = 0;
        m = tr_outline_member(&g->mn, p);
        ty = tr_outline_file_type(t, v, t->cons.v[k].p->dir_off);
        tr_sb_printf(&g->mem, "    %s *%s; /* shared */\n", ty, m);
        tr_sb_printf(&g->fill, "  __ompdsm_fr.%s = %s;\n", m, p);
        tr_sb_printf(&g->pro, "  __typeof__(__ompdsm_f->%s) %s = __ompdsm_f->%s;\n", m, p, m);
        free(ty);
        free(p);
        free(n);
        return;
    }
    at = tr_sharing_walk(t, v, t->cons.v[k].parent, &stop);
    if (stop == STOP_REGION && !strcmp(n, vv->name) && tr_sharing_use(&t->cons.v[at], v) &&
        tr_sharing_use(&t->cons.v[at], v)->mode == MODE_VALUE) {
        /* read-only in the whole region: its value */
        m = tr_outline_member(&g->mn, vv->name);
        ty = tr_outline_file_type_q(t, v, t->cons.v[k].p->dir_off, 1);
        tr_sb_printf(&g->mem, "    %s %s; /* shared, read-only */\n", ty, m);
        tr_sb_printf(&g->fill, "  __ompdsm_fr.%s = %s;\n", m, n);
        tr_sb_printf(&g->pro, "  __typeof__(__ompdsm_f->%s) %s = __ompdsm_f->%s;\n", m,
                     vv->name, m);
        free(ty);
        free(n);
        return;
    }
    free(n);
    g->ok = 0; /* on the encountering thread's stack */
}

static int has_clause(tu *t, int k, int kind)
{
    const omp_pragma *p = t->cons.v[k].p;
    for (int i = 0; i < p->nclauses; i++)
        if (p->clauses[i].kind == kind)
            return 1;
    return 0;
}

static void task_gen_free(task_gen *g)
{
    for (int i = 0; i < g->mn.names.n; i++)
        free(g->mn.names.v[i]);
    free(g->mn.names.v);
    free(g->seen.v);
    tr_sb_free(&g->mem);
    tr_sb_free(&g->fill);
    tr_sb_free(&g->pro);
}

int tr_outline_task(tu *t, int k)
{
    task_gen g;
    construct *c = &t->cons.v[k];
    fninfo *f;
    char *fname, *frame, *body, *ifx, *finx;
    tr_sbuf fn, o;
    int i;
    memset(&g, 0, sizeof g);
    tr_sb_init(&g.mem);
    tr_sb_init(&g.fill);
    tr_sb_init(&g.pro);
    g.ok = c->func >= 0;
    for (i = 0; i < t->vm_typerefs.n && g.ok; i++)
        if (t->vm_typerefs.v[i] >= c->sb && t->vm_typerefs.v[i] < c->se)
            g.ok = 0;
    if (g.ok)
        task_privates(t, k, &g);
    for (i = 0; i < t->refs.n && g.ok; i++) {
        ref r = t->refs.v[i];
        if (r.start < 0 || !tr_con_contains(t, k, r.start) ||
            tr_con_in_list(g.seen.v, g.seen.n, r.var) || !task_shares(t, k, r.var, r.start))
            continue;
        VEC_PUSH(g.seen, r.var);
        task_shared(t, k, r.var, &g);
    }
    if (!g.ok) {
        task_gen_free(&g);
        return -1;
    }
    c = &t->cons.v[k];
    f = &t->funcs.v[c->func];
    fname = tr_xasprintf("__ompdsm_task_%s_%d_%d", f->name, c->line, k);
    frame = tr_xasprintf("__ompdsm_tframe_%s_%d_%d", f->name, c->line, k);
    if (!g.mem.n)
        tr_sb_puts(&g.mem, "    char __ompdsm_unused;\n");
    if (!f->is_main && f->body >= 0 && (!f->pre_decls.s || !strstr(f->pre_decls.s,
                                                                   "/* for its tasks */"))) {
        /* the task may call the function itself (recursion) */
        char *proto = tr_render_str(t, f->b, t->nodes.v[f->body].b);
        tr_sb_printf(&f->pre_decls, "%s; /* for its tasks */\n", proto);
        free(proto);
        c = &t->cons.v[k];
    }
    for (i = 0; i < t->funcs.n; i++)
        if (t->funcs.v[i].pre_decls.s && strstr(t->funcs.v[i].pre_decls.s,
                                                "__ompdsm_tasks_unit"))
            break;
    if (i == t->funcs.n) {
        /* the program creates tasks, maybe from a region of another unit:
         * tell the runtime at start-up, so that every region's barriers
         * take tasks while their creators create them */
        tr_sb_puts(&f->pre_decls, "__attribute__((constructor)) static void "
                               "__ompdsm_tasks_unit(void) { OMPDSM_task_region(); }\n");
        c = &t->cons.v[k];
        f = &t->funcs.v[c->func];
    }
    tr_sb_printf(&f->pre_decls, "struct %s {\n%s};\nstatic void %s(void *);\n", frame,
                 g.mem.s, fname);
    /* the function */
    tr_sb_init(&fn);
    tr_srcmap_sync(&t->map, c->p->begin, &fn);
    tr_sb_printf(&fn, "static void %s(void *__ompdsm_fp)\n{\n"
                   "  struct %s *__ompdsm_f = (struct %s *)__ompdsm_fp;\n",
                 fname, frame, frame);
    tr_outline_replicate_decls(t, k, &fn);
    tr_sb_puts(&fn, g.pro.s ? g.pro.s : "");
    tr_sb_puts(&fn, "  (void)__ompdsm_f;\n");
    c = &t->cons.v[k];
    body = tr_render_str(t, c->sb, c->se);
    tr_srcmap_sync(&t->map, c->sb, &fn);
    tr_sb_puts(&fn, body);
    free(body);
    tr_sb_puts(&fn, "\n}\n");
    c = &t->cons.v[k];
    tr_sb_puts(&t->funcs.v[c->func].pre, fn.s);
    tr_sb_free(&fn);
    /* the call site */
    ifx = c->c_if ? tr_render_str(t, c->c_if->args[0].b, c->c_if->args[0].e) : NULL;
    finx = c->c_final ? tr_render_str(t, c->c_final->args[0].b, c->c_final->args[0].e) : NULL;
    tr_sb_init(&o);
    tr_lower_comment(t, k, &o);
    tr_sb_printf(&o, "{\n  struct %s __ompdsm_fr;\n%s"
                  "  OMPDSM_task(%s, &__ompdsm_fr, sizeof __ompdsm_fr, "
                  "__alignof__(__ompdsm_fr), ",
                 frame, g.fill.s ? g.fill.s : "", fname);
    if (ifx)
        tr_sb_printf(&o, "((%s) ? 0 : OMPDSM_TASK_IF_FALSE) | ", ifx);
    if (finx)
        tr_sb_printf(&o, "((%s) ? OMPDSM_TASK_FINAL : 0) | ", finx);
    tr_sb_printf(&o, "%s%s0);\n}", has_clause(t, k, CL_UNTIED) ? "OMPDSM_TASK_UNTIED | " : "",
                 has_clause(t, k, CL_MERGEABLE) ? "OMPDSM_TASK_MERGEABLE | " : "");
    c = &t->cons.v[k];
    tr_edit_add(t, c->b, c->e, tr_sb_take(&o), tr_con_depth(t, k));
    free(ifx);
    free(finx);
    free(fname);
    free(frame);
    task_gen_free(&g);
    return 0;
}
