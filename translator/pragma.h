/* pragma.h - `#pragma omp` lines parsed into a directive and its clauses.
 *
 * The parser works on the preprocessed text only (no libclang): it finds
 * the directive name, checks each clause against the directive, splits
 * clause arguments into variable lists and expression ranges (offsets into
 * the text, so that the translator can rewrite identifiers inside them),
 * and checks the few constant arguments it must (collapse, the profiled
 * schedule's non-negative arguments).  Pure: unit-tested without clang. */
#ifndef OMPCC_PRAGMA_H
#define OMPCC_PRAGMA_H

#include "util.h"

enum omp_dir {
    DIR_PARALLEL,
    DIR_FOR,
    DIR_PARALLEL_FOR,
    DIR_SECTIONS,
    DIR_PARALLEL_SECTIONS,
    DIR_SECTION,
    DIR_SINGLE,
    DIR_MASTER,
    DIR_CRITICAL,
    DIR_BARRIER,
    DIR_ATOMIC,
    DIR_FLUSH,
    DIR_ORDERED,
    DIR_THREADPRIVATE,
    DIR_TASK,
    DIR_TASKWAIT,
    DIR_TASKYIELD,
    DIR_TASKGROUP, /* 4.0; accepted: tasks run undeferred */
    DIR_IGNORED,   /* simd, declare simd: ignored with a warning */
    DIR_NDIRS
};

enum omp_clause_kind {
    CL_IF,
    CL_NUM_THREADS,
    CL_DEFAULT,
    CL_PRIVATE,
    CL_FIRSTPRIVATE,
    CL_LASTPRIVATE,
    CL_SHARED,
    CL_COPYIN,
    CL_COPYPRIVATE,
    CL_REDUCTION,
    CL_SCHEDULE,
    CL_COLLAPSE,
    CL_ORDERED,
    CL_NOWAIT,
    CL_UNTIED,
    CL_FINAL,
    CL_MERGEABLE,
    CL_IGNORED, /* a clause that may be dropped (proc_bind, safelen, ...) */
    CL_NKINDS
};

/* schedule kinds; the emitter maps them to OMPDSM_SCHED_* */
enum omp_sched {
    SCHED_NONE, SCHED_STATIC, SCHED_DYNAMIC, SCHED_GUIDED, SCHED_RUNTIME,
    SCHED_AUTO, SCHED_PROFILED
};

/* reduction operators; the emitter maps them to OMPDSM_OP_* */
enum omp_redop {
    RED_ADD, RED_SUB, RED_MUL, RED_AND, RED_OR, RED_XOR, RED_LAND, RED_LOR,
    RED_MAX, RED_MIN
};

enum omp_default { DEFAULT_UNSPEC, DEFAULT_SHARED, DEFAULT_NONE };

enum omp_atomic_kind { ATOMIC_UPDATE, ATOMIC_READ, ATOMIC_WRITE, ATOMIC_CAPTURE };

/* [b, e): byte offsets into the text */
typedef struct prange {
    unsigned b, e;
} prange;

/* one name in a list: private(a, b), flush(x), threadprivate(t) */
typedef struct pname {
    char *name;
    unsigned off;
} pname;

typedef struct omp_clause {
    int kind;              /* enum omp_clause_kind */
    unsigned off;          /* offset of the clause keyword */
    char *spelling;        /* the keyword as written */
    pname *vars;           /* variable list clauses */
    int nvars;
    prange args[3];        /* expressions: if/num_threads/final/collapse:
                              args[0]; schedule: chunk, eval_size, eval_skip */
    int nargs;
    int sched;             /* enum omp_sched (schedule) */
    int redop;             /* enum omp_redop (reduction) */
    int dflt;              /* enum omp_default (default) */
    long long ival;        /* collapse(n): n */
} omp_clause;

typedef struct omp_pragma {
    int dir;               /* enum omp_dir */
    unsigned begin, end;   /* the line: '#' .. last char before '\n' */
    unsigned dir_off;      /* offset of the directive's first word */
    char *dir_spelling;    /* e.g. "parallel for simd" */
    char *critical_name;   /* critical(name), or NULL */
    pname *vars;           /* flush(list), threadprivate(list) */
    int nvars;
    int atomic_kind;       /* enum omp_atomic_kind */
    omp_clause *clauses;
    int nclauses;
} omp_pragma;

/* A message about an offset in the text. */
typedef struct pragma_msg {
    unsigned off;
    char msg[240];
} pragma_msg;

/* If line[0..len) is `# pragma omp ...` (blanks allowed around '#'),
 * returns 1. */
int tr_pragma_is_omp(const char *line, size_t len);

/* Parses text[begin, end), a `#pragma omp` line.  Returns 0 and fills *p,
 * or -1 with the first error in *err.  Warnings (ignored constructs and
 * clauses) are appended to warns (up to *nwarns < maxwarns). */
int tr_pragma_parse(const char *text, unsigned begin, unsigned end,
                    omp_pragma *p, pragma_msg *err, pragma_msg *warns,
                    int *nwarns, int maxwarns);
void tr_pragma_free(omp_pragma *p);

/* Canonical one-line form of a parsed pragma, for --dump-pragmas and the
 * unit tests, e.g. "parallel for num_threads(4) schedule(profiled, 8, 2, 1)
 * reduction(+: s)". */
void tr_pragma_format(const omp_pragma *p, const char *text, tr_sbuf *out);

const char *tr_pragma_dir_name(int dir);
const char *tr_pragma_redop_name(int op);

/* The clause of the given kind, or NULL. */
const omp_clause *tr_pragma_find_clause(const omp_pragma *p, int kind);

/* Parses and evaluates an integer constant expression made of integer
 * literals, parentheses and + - * / % << >> ~ (unary and binary).
 * Returns 1 and *val when text[b, e) is one; 0 when it is not constant
 * (for example it names a variable); -1 when it is a floating constant. */
int tr_pragma_const_eval(const char *text, unsigned b, unsigned e,
                         long long *val);

#endif
