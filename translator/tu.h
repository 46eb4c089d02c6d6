/* tu.h - the translator's model of one preprocessed translation unit: the
 * line map, a mirror of libclang's cursor tree, variables, functions,
 * OpenMP constructs, references and the edit list, shared by ast.c,
 * analysis.c, rules.c, sharing.c, globals.c, outline.c, outline_task.c,
 * lower.c and emit.c.
 *
 * Offsets are byte offsets into the preprocessed text; every cursor of the
 * user's code lies in that one buffer, so extents are plain [b, e) pairs. */
#ifndef OMPCC_TU_H
#define OMPCC_TU_H

#include <clang-c/Index.h>

#include "pragma.h"
#include "util.h"

/* ------------------------------------------------------------------------
 * srcmap.c: presumed positions from `# N "file" flags` line markers
 * ------------------------------------------------------------------------ */
typedef struct srcmap {
    const char *text;
    unsigned len;
    unsigned *line_off;   /* start offset of each physical line */
    int *pfile;           /* presumed file (index into files) of each line */
    int *pline;           /* presumed line number of each line */
    unsigned char *psys;  /* 1 when the line belongs to a system header */
    int nlines;
    char **files;
    int nfiles;
    int main_file;        /* the first file named by a marker */
} srcmap;

void tr_srcmap_init(srcmap *m, const char *text, unsigned len);
void tr_srcmap_presumed(const srcmap *m, unsigned off, const char **file,
                        int *line, int *col);
int tr_srcmap_is_system(const srcmap *m, unsigned off);
const char *tr_srcmap_main_file(const srcmap *m);
/* Appends a #line marker for off (on a line of its own) and blanks up to
 * its column. */
void tr_srcmap_sync(const srcmap *m, unsigned off, tr_sbuf *out);

/* ------------------------------------------------------------------------
 * The model
 * ------------------------------------------------------------------------ */

/* one libclang cursor of the user's code (system headers are skipped) */
typedef struct tr_node {
    CXCursor c;
    enum CXCursorKind kind;
    unsigned b, e;        /* extent */
    unsigned loc;         /* clang_getCursorLocation (a name's offset) */
    int parent, first, next; /* tree links, -1 = none */
    int func;             /* enclosing function definition, -1 = file scope */
    int var;              /* VarDecl/ParmDecl: its variable; DeclRefExpr to a
                             variable: the variable; else -1 */
} tr_node;

enum var_kind {
    VK_GLOBAL,   /* file scope, or block-scope extern */
    VK_STATIC,   /* function-static */
    VK_LOCAL,    /* automatic */
    VK_PARAM,    /* function parameter */
    VK_SYSTEM,   /* declared only in system headers: never touched */
};

typedef struct var {
    CXCursor canon;       /* clang_getCanonicalCursor of its declarations */
    char *name;
    int kind;             /* enum var_kind */
    int func;             /* function of a static, local or parameter */
    CXType type;          /* type of the defining declaration */
    VEC(int) decls;       /* VarDecl/ParmDecl nodes */
    int def;              /* node of the definition (or tentative one), -1 */
    int init;             /* node of the definition's initializer, -1 */
    unsigned scope_b, scope_e; /* where the name is visible (locals) */
    int threadprivate;    /* named in #pragma omp threadprivate */
    int tls;              /* declared __thread / _Thread_local by the user */
    int is_const;         /* const object: stays private */
    int rewritten;        /* global/static living in the shared heap */
    char *ptr;            /* its pointer: __ompdsm_g_x, __ompdsm_s_f_x */
    int scalar;           /* arithmetic, enum or pointer type */
    int decay;            /* parameter declared as an array (1) or a
                             function (2): really a pointer */
    int addr_taken;       /* unary & applied to it somewhere in its function */
    int decl_con;         /* innermost construct holding its declaration */
    int promoted;         /* local kept in the shared heap (OMPDSM_local_alloc) */
    int declstmt;         /* DeclStmt node of a local, -1 */
    unsigned split_e;     /* promoted local declared before other declarators
                             of its statement: the end of its declarator, after
                             which the statement is split (globals.c); 0 */
    int dyn_init;         /* threadprivate initialised by the unit's init */
    int nrefs;            /* references in the code */
    int used_base;        /* some code still names the declared variable */
    int escapes;          /* its address is taken in the function's own code */
} var;

typedef struct func {
    char *name;
    int node;             /* FunctionDecl */
    int body;             /* CompoundStmt */
    unsigned b, e;        /* extent of the definition */
    int is_main;
    int nregions;         /* for unique names */
    VEC(int) cons;        /* constructs inside, in source order */
    tr_sbuf pre;             /* generated code placed before the definition */
    tr_sbuf pre_decls;       /* hoisted statics, sites, frames and prototypes */
} fninfo;

/* data-sharing modes of a variable a parallel region uses */
enum mode {
    MODE_GLOBAL,  /* rewritten global: (*__ompdsm_g_x), nothing in the frame */
    MODE_PLAIN,   /* threadprivate, const or system global: plain name */
    MODE_VALUE,   /* read-only scalar local: copied into the frame */
    MODE_POINTER, /* local in the shared heap: frame holds its address */
};

enum access { ACC_READ = 1, ACC_WRITE = 2, ACC_ADDR = 4 };

typedef struct usage {
    int var;
    int access;           /* enum access bits */
    int mode;             /* enum mode (decided in sharing.c) */
} usage;

/* a canonical loop: for (v = lb; v op ub; v += step) */
typedef struct loopinfo {
    int node;             /* ForStmt */
    int var;              /* loop variable */
    int declared;         /* declared in the init statement */
    prange lb, ub;        /* expression ranges */
    prange step;          /* empty for ++/-- */
    int step_neg;         /* -- or -= or i = i - s */
    char cmp;             /* '<', 'l' (<=), '>', 'g' (>=) */
    int is_ptr, is_unsigned;
    int body;             /* the loop body tr_node */
} loopinfo;

typedef struct construct {
    omp_pragma *p;        /* the parsed pragma (shared by a combined pair) */
    int dir;              /* DIR_PARALLEL, DIR_FOR, DIR_SECTIONS, ... */
    int combined;         /* parallel part (1) / work-sharing part (2) */
    unsigned b, e;        /* replaced range: pragma line .. end of block */
    unsigned sb, se;      /* the structured block */
    int stmt;             /* node of the block, -1 when it is a construct */
    int parent;           /* enclosing construct, -1 */
    int func;
    int line;             /* presumed line of the pragma */
    int dflt;             /* enum omp_default */
    int nowait;
    int ordered;          /* loop with an ordered clause */
    /* variables named in clauses (var indices) */
    VEC(int) priv, fpriv, lpriv, shared, copyin, copyprivate, red, flush;
    VEC(int) redop;       /* enum omp_redop of each red entry */
    VEC(int) task_fp;     /* task: implicitly firstprivate variables */
    VEC(int) reported;    /* default(none) violations already reported */
    const omp_clause *c_if, *c_num_threads, *c_schedule, *c_final;
    loopinfo loops[16];   /* for: the collapsed loop nest */
    int nloops;
    VEC(prange) sections; /* sections: each section's statement */
    VEC(usage) uses;      /* parallel: variables it uses from outside */
    char *fname;          /* parallel: outlined function name */
    char *site;           /* for/sections: loop site name */
    char *text;           /* the replacement text, once generated */
} construct;

/* a reference: an identifier in the code or in a clause, or a need of a
 * construct (synthetic, no text) */
typedef struct ref {
    int var;
    unsigned b, e;        /* the identifier; b == e for synthetic needs */
    int start;            /* innermost construct that contains it, -1 */
    int access;           /* enum access bits */
    int func;
    int node;             /* the DeclRefExpr, -1 */
} ref;

typedef struct edit {
    unsigned b, e;        /* replaced range; b == e inserts */
    char *text;
    int prio;             /* equal ranges: lower prio is the outer edit */
    int seq;
} edit;

typedef struct tu {
    const char *ipath;    /* the preprocessed file (libclang's name) */
    const char *text;
    unsigned len;
    srcmap map;
    CXIndex index;
    CXTranslationUnit ctu;
    VEC(tr_node) nodes;
    VEC(var) vars;
    VEC(fninfo) funcs;
    VEC(construct) cons;
    VEC(ref) refs;
    VEC(edit) edits;
    int edits_sorted;
    /* -g: tr_render() brackets the user's text with TU_USER_BEGIN/END, so that
     * tr_emit_unit can tell ompcc's own lines from the user's */
    int mark_user;
    VEC(omp_pragma *) pragmas;
    VEC(int) defined_funcs; /* user function definitions (names) */
    int *vhash;           /* open addressing: canonical cursor -> var */
    int vhash_cap;
    /* per-TU generated pieces */
    tr_sbuf globals_tab;     /* OMPDSM_global entries */
    tr_sbuf global_decls;    /* OMPDSM_srcpos of each, in the same order */
    int nglobals;
    tr_sbuf init_fn;         /* body of the initialiser */
    tr_sbuf tp_init_fn;      /* threadprivate initial values computed at run
                             time, for each thread the runtime starts */
    VEC(char *) regions;  /* region descriptor names */
    VEC(char *) criticals;
    int main_func;        /* index of the user's main, -1 */
    VEC(char *) sites;    /* loop site names */
    VEC(int) spin_loops;  /* loops given a flush after them (nodes) */
    VEC(unsigned) vm_typerefs; /* uses of typedefs of variable-length array
                                  types declared in functions (offsets) */
} tu;

/* diagnostics at an offset of the preprocessed text (presumed location) */
void tr_tu_error(tu *t, unsigned off, const char *fmt, ...) OMPCC_PRINTF(3, 4);
void tr_tu_warning(tu *t, unsigned off, const char *fmt, ...) OMPCC_PRINTF(3, 4);

/* ast.c */
int tr_ast_build(tu *t);
int tr_ast_child(const tu *t, int n, int k);  /* k-th child, -1 */
int tr_ast_nchildren(const tu *t, int n);
int tr_ast_strip(const tu *t, int n);          /* skips parens and implicit casts */
char *tr_ast_type_spelling(CXType ty);
/* a type name for variable v (parameters decayed), for __typeof__(...) */
char *tr_ast_var_type_name(tu *t, int v, int unqual);
/* tr_ast_type_is_local() of the variable's (decayed) type */
int tr_ast_var_type_is_local(tu *t, int v, const char **why);
/* The diff granule of an object of this type (OMPDSM_global.granule): the
 * largest of 8, 4, 2, 1 that divides the offset and the size of every
 * scalar inside it; 1 with a bit-field or anything unknown. */
unsigned tr_ast_type_granule(CXType ty);
/* 1 for a volatile object or an array of volatile elements: its address
 * needs a cast to be passed as a plain const void * */
int tr_ast_type_is_volatile_object(CXType ty);
/* 1 when the type (or what it is built from) is declared inside a
 * function, or is variably modified; *why says which. */
int tr_ast_type_is_local(CXType ty, const char **why);
/* 1 when the type is variably modified: a variable-length array, or
 * built from one (a pointer to a VLA, an array of them, ...) */
int tr_ast_type_is_vm(CXType ty);
/* Skips the sugar libclang exposes (elaborated names, attributes). */
CXType tr_ast_type_desugar(CXType ty);
/* variably modified variables */
enum vm_kind {
    VM_NONE,
    VM_ARRAY,    /* an array of variable size (int a[n], int b[4][n]) */
    VM_POINTER,  /* a pointer to a VLA, or a parameter `T a[][n]` */
    VM_OTHER,    /* anything else (an array of pointers to VLAs, ...) */
};
int tr_ast_var_vm(tu *t, int v);
/* OMPDSM_TY_* name of an arithmetic type, or NULL */
const char *tr_ast_type_code(CXType ty);
int tr_ast_func_at(const tu *t, unsigned off);  /* function containing off */

/* analysis.c: constructs, loops, scopes */
int tr_analysis_constructs(tu *t);
int tr_analysis_lookup(tu *t, const char *name, unsigned off, int func);
int tr_con_contains(const tu *t, int outer, int inner); /* inner within outer */
int tr_con_at(const tu *t, int func, unsigned off);     /* innermost, -1 */
int tr_con_is_region(const construct *c);
int tr_con_privatizes(const construct *c, int var);
int tr_con_in_list(const int *list, int n, int var);
/* end of statement n including a trailing ';' */
unsigned tr_analysis_stmt_end(tu *t, int n);

/* rules.c: the rules of OpenMP that gcc enforces (data sharing, nesting,
 * jumps), on the constructs tr_analysis_constructs made; errors through
 * tr_tu_error */
void tr_rules_check(tu *t);

/* sharing.c: data sharing and naming */
int tr_sharing_analyse(tu *t);
enum tr_stop { STOP_DECL, STOP_PRIV, STOP_REGION };
int tr_sharing_walk(tu *t, int var, int start, int *stop_at);
/* the text that names var in code placed at construct `start` (or at
 * function level when start is -1) at offset off; NULL when the variable
 * is not available there */
char *tr_sharing_name(tu *t, int var, int start, unsigned off);
/* a type expression usable anywhere in the function or the outlined
 * function around `start`: __typeof__(...) of the name or of clang's
 * spelling; reports an error (and returns "int") when impossible */
char *tr_sharing_type(tu *t, int var, int start, unsigned off);
usage *tr_sharing_use(construct *c, int var);

/* rewrite.c: the edit list */
void tr_edit_add(tu *t, unsigned b, unsigned e, char *text, int prio);
/* the text of [b, e) with every outermost edit inside applied; #line
 * markers follow edits that add or remove lines */
void tr_render(tu *t, unsigned b, unsigned e, tr_sbuf *out);
char *tr_render_str(tu *t, unsigned b, unsigned e);
/* The text for reference r to a volatile variable (name: how the code
 * names it there; taken over): a read becomes a refetch from the home and
 * a write gets a write-through after its assignment (edits added here);
 * any other reference keeps name. */
char *tr_rewrite_volatile(tu *t, const ref *r, char *name);

/* globals.c */
void tr_globals_classify(tu *t);
void tr_globals_rewrite(tu *t);
void tr_globals_tables(tu *t);

/* outline.c */
void tr_outline_region(tu *t, int k);
/* Frame member names of one outlined function: each variable's name, made
 * unique by tr_outline_member (which records and returns it). */
typedef struct tr_members {
    VEC(char *) names;
} tr_members;
char *tr_outline_member(tr_members *m, const char *name);
/* A type expression for variable v valid at file scope (errors at off);
 * _q with unqual: without its top-level qualifiers. */
char *tr_outline_file_type(tu *t, int v, unsigned off);
char *tr_outline_file_type_q(tu *t, int v, unsigned off, int unqual);
/* v's name where construct k starts, as the encountering thread sees it. */
char *tr_outline_outer(tu *t, int k, int v);
/* The enclosing function's block-scope function and extern declarations
 * before construct k, which the outlined function must see too. */
void tr_outline_replicate_decls(tu *t, int k, tr_sbuf *o);

/* outline_task.c */
/* Outlines a task so that any node can run it (OMPDSM_task); -1 when it
 * must run in place (tr_lower_construct then lowers it as a block). */
int tr_outline_task(tu *t, int k);

/* lower.c */
void tr_lower_construct(tu *t, int k);
int tr_con_depth(const tu *t, int k);
void tr_lower_comment(tu *t, int k, tr_sbuf *o);
const char *tr_lower_redop_abi(int op);
const char *tr_lower_type_code(tu *t, CXType ty, int op, unsigned off,
                               const char *what, const char *name);

/* emit.c */
enum { TU_USER_BEGIN = 1, TU_USER_END = 2 };
char *tr_emit_unit(tu *t, const char *abi_header, const char *abi_path);
void tr_emit_dump_pragmas(tu *t, tr_sbuf *out);

#endif
