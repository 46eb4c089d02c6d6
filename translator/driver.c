/* driver.c - ompcc's command line and pipeline.
 *
 *   source.c --clang -E--> tmp.i --translate--> name.ompdsm.c
 *            --backend -c--> name.o --backend (link)--> a.out + libompdsm
 *
 * With a GNU C backend (gcc, cc: OMPDSM_CC or --backend=), the backend
 * preprocesses instead of clang, so that the translated file holds the
 * headers as gcc sees them; libclang parses that text with a few macros
 * for gcc's keywords (translate.c, gnu_args).
 *
 * Options are sorted by the step that needs them: preprocessing (-I -D -U
 * -include, dependency generation -M*), libclang's parse (-std, -m, a few
 * -f), the backend compile (-O -g -W -f -m and anything unknown) and the
 * link (-L -l -Wl, objects, in their order).
 *
 * With clang as the backend every compile loads the write-detection pass
 * (translator/wdpass/ompdsm-wd.so) unless --no-write-detection or
 * OMPDSM_WD_COMPILE=off say not to. */
#include "driver.h"
#include "translate.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef OMPCC_VERSION
#define OMPCC_VERSION "0"
#endif
#ifndef OMPCC_CLANG
#define OMPCC_CLANG "clang-19"
#endif
#ifndef OMPCC_BUILD_EXE
#define OMPCC_BUILD_EXE ""
#endif
#ifndef OMPCC_BUILD_INCDIR
#define OMPCC_BUILD_INCDIR ""
#endif
#ifndef OMPCC_BUILD_LIBDIR
#define OMPCC_BUILD_LIBDIR ""
#endif
#ifndef OMPCC_PREFIX
#define OMPCC_PREFIX "/usr/local"
#endif
#ifndef OMPCC_BINDIR
#define OMPCC_BINDIR "bin"
#endif
#ifndef OMPCC_LIBDIR
#define OMPCC_LIBDIR "lib"
#endif
#ifndef OMPCC_INCDIR
#define OMPCC_INCDIR "include/ompdsm"
#endif
#ifndef OMPCC_BUILD_WDPASS
#define OMPCC_BUILD_WDPASS ""
#endif
#ifndef OMPCC_WDPASS
#define OMPCC_WDPASS "ompdsm-wd.so"
#endif
#ifndef OMPCC_LLVM_MAJOR
#define OMPCC_LLVM_MAJOR 19
#endif

extern char **environ;

typedef VEC(char *) strvec;

enum mode { MODE_LINK, MODE_COMPILE, MODE_ASM, MODE_PREPROCESS };
enum input_kind { IN_C, IN_I, IN_ASM, IN_OTHER };

typedef struct input {
    char *path;
    int kind;
    char *obj;       /* the object (or .s) made from it */
} input;

typedef struct opts {
    int mode;
    int deps_only;       /* -M or -MM without -MD/-MMD: clang -E does it all */
    int md;              /* -MD or -MMD */
    char *out;
    char *mf;
    int have_mt;
    int keep, verbose, dump, version;
    int no_wd;           /* --no-write-detection */
    char *backend;       /* --backend=CMD (NULL: OMPDSM_CC) */
    int debug; /* -g (not -g0): the translation keeps the user's lines */
    int debug_given;     /* any -g option: else line tables are added */
    strvec pp;           /* preprocessing */
    strvec parse;        /* libclang's parse */
    strvec cc;           /* backend compile */
    strvec deps;         /* -MD -MMD -MP -MG -MT -MQ (with arguments) */
    strvec link;         /* link line, in order; "\001N" stands for input N */
    VEC(input) inputs;
} opts;

typedef struct paths {
    char *incdir;        /* omp.h and ompdsm_abi.h */
    char *libdir;        /* libompdsm.so */
    char *wdpass;        /* the write-detection pass plugin (NULL: none) */
    char *clang;         /* preprocessor, and the default backend */
    strvec cc;           /* the backend command (OMPDSM_CC split at blanks) */
    int named;           /* by OMPDSM_CC or --backend= */
    int gnu;             /* the backend is GNU C (gcc): it preprocesses */
    int clang_major;     /* the backend's __clang_major__ (0: not clang) */
} paths;

/* ------------------------------------------------------------------------
 * temporary files
 * ------------------------------------------------------------------------ */

static char *tmpdir;
static strvec tmpfiles;

static void cleanup(void)
{
    int i;
    for (i = 0; i < tmpfiles.n; i++)
        unlink(tmpfiles.v[i]);
    if (tmpdir)
        rmdir(tmpdir);
}

static void on_signal(int sig)
{
    cleanup();
    signal(sig, SIG_DFL);
    raise(sig);
}

static const char *get_tmpdir(void)
{
    if (!tmpdir) {
        const char *base = getenv("TMPDIR");
        char *tmpl = tr_xasprintf("%s/ompcc-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmpl))
            tr_internal_error("cannot create a temporary directory %s: %s", tmpl,
                              strerror(errno));
        tmpdir = tmpl;
        atexit(cleanup);
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGHUP, on_signal);
    }
    return tmpdir;
}

static char *tmpfile_named(const char *base, const char *ext)
{
    char *p = tr_xasprintf("%s/%s%s", get_tmpdir(), base, ext);
    int i, n = 2;
    for (i = 0; i < tmpfiles.n; i++) {
        if (!strcmp(tmpfiles.v[i], p)) {
            free(p);
            p = tr_xasprintf("%s/%s-%d%s", get_tmpdir(), base, n++, ext);
            i = -1;
        }
    }
    VEC_PUSH(tmpfiles, p);
    return p;
}

/* ------------------------------------------------------------------------
 * small helpers
 * ------------------------------------------------------------------------ */

static void push(strvec *v, const char *s)
{
    VEC_PUSH(*v, tr_xstrdup(s));
}

static void push_all(strvec *dst, const strvec *src)
{
    int i;
    for (i = 0; i < src->n; i++)
        push(dst, src->v[i]);
}

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

static const char *ext_of(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash))
        return "";
    return dot;
}

/* "dir/name.c" -> "name" */
static char *stem(const char *path)
{
    const char *slash = strrchr(path, '/'), *b = slash ? slash + 1 : path;
    const char *dot = strrchr(b, '.');
    return dot && dot != b ? tr_xstrndup(b, (size_t)(dot - b)) : tr_xstrdup(b);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return tr_xstrdup(".");
    if (slash == path)
        return tr_xstrdup("/");
    return tr_xstrndup(path, (size_t)(slash - path));
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void print_cmd(const strvec *v)
{
    int i;
    for (i = 0; i < v->n; i++) {
        const char *s = v->v[i];
        if (strpbrk(s, " \t\"'\\$") || !*s)
            fprintf(stderr, "%s'%s'", i ? " " : "", s);
        else
            fprintf(stderr, "%s%s", i ? " " : "", s);
    }
    fputc('\n', stderr);
}

/* Runs argv; returns its exit status (128+signal when killed). */
static int run(strvec *argv, int verbose)
{
    pid_t pid;
    int st, rc;
    VEC_PUSH(*argv, NULL);
    argv->n--;
    if (verbose)
        print_cmd(argv);
    rc = posix_spawnp(&pid, argv->v[0], NULL, NULL, argv->v, environ);
    if (rc != 0) {
        fprintf(stderr, "ompcc: error: cannot run %s: %s\n", argv->v[0], strerror(rc));
        return 127;
    }
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "ompcc: error: waiting for %s: %s\n", argv->v[0],
                    strerror(errno));
            return 1;
        }
    }
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    fprintf(stderr, "ompcc: error: %s killed by signal %d\n", argv->v[0], WTERMSIG(st));
    return 128 + WTERMSIG(st);
}

/* ------------------------------------------------------------------------
 * where things are
 * ------------------------------------------------------------------------ */

static char *self_exe(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return NULL;
    buf[n] = 0;
    return tr_xstrdup(buf);
}

static void find_paths(paths *p)
{
    char *exe = self_exe(), *build = NULL, *rp;
    char buf[PATH_MAX];
    const char *env;
    memset(p, 0, sizeof *p);
    p->clang = tr_xstrdup(OMPCC_CLANG);
    if (*OMPCC_BUILD_EXE && (rp = realpath(OMPCC_BUILD_EXE, buf)) != NULL)
        build = tr_xstrdup(rp);
    if (exe && build && !strcmp(exe, build)) {
        p->incdir = tr_xstrdup(OMPCC_BUILD_INCDIR);
        p->libdir = tr_xstrdup(OMPCC_BUILD_LIBDIR);
        p->wdpass = tr_xstrdup(OMPCC_BUILD_WDPASS);
    } else if (exe && OMPCC_BINDIR[0] != '/') {
        /* relocatable installation: <prefix>/<bindir>/ompcc */
        static const char bindir[] = OMPCC_BINDIR;
        char *prefix = dir_of(exe);
        const char *s;
        for (s = bindir; *s; s++) {
            if (*s != '/' && (s == bindir || s[-1] == '/')) {
                char *up = dir_of(prefix);
                free(prefix);
                prefix = up;
            }
        }
        p->incdir = OMPCC_INCDIR[0] == '/' ? tr_xstrdup(OMPCC_INCDIR)
                                           : tr_xasprintf("%s/%s", prefix, OMPCC_INCDIR);
        p->libdir = OMPCC_LIBDIR[0] == '/' ? tr_xstrdup(OMPCC_LIBDIR)
                                           : tr_xasprintf("%s/%s", prefix, OMPCC_LIBDIR);
        free(prefix);
    }
    if (!p->incdir || !file_exists(p->incdir)) {
        free(p->incdir);
        free(p->libdir);
        p->incdir = OMPCC_INCDIR[0] == '/' ? tr_xstrdup(OMPCC_INCDIR)
                                           : tr_xasprintf("%s/%s", OMPCC_PREFIX, OMPCC_INCDIR);
        p->libdir = OMPCC_LIBDIR[0] == '/' ? tr_xstrdup(OMPCC_LIBDIR)
                                           : tr_xasprintf("%s/%s", OMPCC_PREFIX, OMPCC_LIBDIR);
    }
    /* installed beside libompdsm; OMPDSM_LIBDIR (a stand-in runtime for
     * the link) does not move it */
    if (!p->wdpass)
        p->wdpass = tr_xasprintf("%s/%s", p->libdir, OMPCC_WDPASS);
    if (!file_exists(p->wdpass)) {
        free(p->wdpass);
        p->wdpass = NULL;
    }
    if ((env = getenv("OMPDSM_LIBDIR")) && *env) {
        free(p->libdir);
        p->libdir = tr_xstrdup(env);
    }
    free(exe);
    free(build);
}

static void backend(strvec *v, const paths *p)
{
    push_all(v, &p->cc);
}

/* Whether the backend is GNU C: its predefined macros (cc -dM -E) have
 * __GNUC__ and not __clang__.  By what it is, not by its name: cc, gcc-12,
 * x86_64-linux-gnu-gcc and "ccache gcc" are all gcc.  -1 when it cannot
 * be run.  Sets p->clang_major to its __clang_major__ (0 without). */
static int backend_is_gnu(paths *p, int verbose)
{
    strvec cmd = {0};
    char *out = tmpfile_named("predefined", ".h"), line[512];
    int gnuc = 0, clang = 0;
    static const char major[] = "#define __clang_major__ ";
    FILE *f;
    backend(&cmd, p);
    push(&cmd, "-dM");
    push(&cmd, "-E");
    push(&cmd, "-x");
    push(&cmd, "c");
    push(&cmd, "/dev/null");
    push(&cmd, "-o");
    push(&cmd, out);
    if (run(&cmd, verbose) != 0 || !(f = fopen(out, "r")))
        return -1;
    while (fgets(line, sizeof line, f)) {
        if (starts(line, "#define __GNUC__ "))
            gnuc = 1;
        else if (starts(line, "#define __clang__ "))
            clang = 1;
        else if (starts(line, major))
            p->clang_major = atoi(line + sizeof major - 1);
    }
    fclose(f);
    return gnuc && !clang;
}

/* The backend: --backend=CMD, else OMPDSM_CC, split at blanks ("ccache
 * clang-19" works), else the clang ompcc parses with.  0, or -1 when a
 * named backend cannot be run. */
static int find_backend(paths *p, const char *cmd, int verbose)
{
    int gnu;
    if (!cmd)
        cmd = getenv("OMPDSM_CC");
    if (cmd && *cmd) {
        char *s = tr_xstrdup(cmd), *tok, *save = NULL;
        for (tok = strtok_r(s, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
            push(&p->cc, tok);
        free(s);
    }
    if (!p->cc.n) {
        push(&p->cc, p->clang);
        p->clang_major = OMPCC_LLVM_MAJOR;
        return 0;
    }
    p->named = 1;
    gnu = backend_is_gnu(p, verbose);
    p->gnu = gnu > 0;
    return gnu < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------------
 * the command line
 * ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fputs("Usage: ompcc [options] file...\n"
          "Compiles OpenMP C programs for ompdsm (a cluster through a software\n"
          "distributed shared memory).  Behaves like cc; -fopenmp is implied.\n"
          "\n"
          "  -c, -S, -E, -o FILE       as cc: compile only, assembly, preprocess, output\n"
          "  -I -D -U -include -M...   preprocessing (clang -E; gcc -E when the\n"
          "                            backend is gcc)\n"
          "  -O -g -W -f -m -std=      compilation\n"
          "  -L -l -Wl,... objects     linking (with libompdsm, rpath set)\n"
          "  -k, --keep                keep the translated C as NAME.ompdsm.c beside\n"
          "                            the output\n"
          "  --dump-pragmas            print the parsed OpenMP directives and exit\n"
          "  -v                        print the commands ompcc runs\n"
          "  --backend=CC              the backend compiler (as OMPDSM_CC; empty:\n"
          "                            the default clang)\n"
          "  --no-write-detection      compile without the write-detection pass\n"
          "                            (as OMPDSM_WD_COMPILE=off)\n"
          "  --version, --help\n"
          "\n"
          "Environment: OMPDSM_CC selects the backend compiler (default: the\n"
          "clang ompcc parses with; a gcc also preprocesses); OMPDSM_LIBDIR\n"
          "overrides where libompdsm is; OMPDSM_WD_COMPILE=off leaves out the\n"
          "write-detection pass.\n"
          "See docs/ompcc.md.\n",
          f);
}

static void add_input(opts *o, const char *path, const char *lang)
{
    input in;
    const char *e = ext_of(path);
    char buf[16];
    memset(&in, 0, sizeof in);
    in.path = tr_xstrdup(path);
    if (lang && !strcmp(lang, "c"))
        in.kind = IN_C;
    else if (lang && !strcmp(lang, "cpp-output"))
        in.kind = IN_I;
    else if (!strcmp(e, ".c"))
        in.kind = IN_C;
    else if (!strcmp(e, ".i"))
        in.kind = IN_I;
    else if (!strcmp(e, ".s") || !strcmp(e, ".S") || !strcmp(e, ".sx"))
        in.kind = IN_ASM;
    else
        in.kind = IN_OTHER;
    VEC_PUSH(o->inputs, in);
    snprintf(buf, sizeof buf, "\001%d", o->inputs.n - 1);
    push(&o->link, buf);
}

/* Returns -1 on a usage error, 1 when ompcc should exit 0 (--help). */
/* ------------------------------------------------------------------------
 * the options: one table, first match wins
 * ------------------------------------------------------------------------ */

/* What an option does (apply_option). */
enum opt_act {
    A_HELP, A_VERSION, A_COMPILE, A_ASM, A_PREPROCESS, A_IGNORE, A_OUT,
    A_KEEP, A_DUMP, A_VERBOSE, A_LANG, A_BACKEND, A_NO_WD,
    A_DEPS_ONLY, /* -M -MM: clang -E does it all */
    A_DEPS_MD,   /* -MD -MMD: dependencies beside the compile */
    A_DEPS,      /* other dependency flags, passed on */
    A_DEPS_MF, A_DEPS_MT,
    A_PP,        /* preprocessing only */
    A_LINK,      /* linking only */
    A_STD,       /* the language: preprocessing, parse and compile */
    A_CODEGEN,   /* predefined macros, the parse and the link too */
    A_CC,        /* compiling (-g also linking) */
    A_OTHER,     /* unknown: to the backend, for compiling and linking */
};

struct optdef {
    const char *name;
    unsigned char prefix; /* also matches words that start with name (a
                           * joined argument or a family: -Ifoo, -O2) */
    unsigned char arg;    /* written alone, takes the next word */
    unsigned char act;    /* enum opt_act */
};

static const struct optdef options[] = {
    {"--help", 0, 0, A_HELP}, {"-help", 0, 0, A_HELP},
    {"--version", 0, 0, A_VERSION},
    {"-c", 0, 0, A_COMPILE}, {"-S", 0, 0, A_ASM}, {"-E", 0, 0, A_PREPROCESS},
    {"-fopenmp", 1, 0, A_IGNORE}, {"-fno-openmp", 0, 0, A_IGNORE},
    {"-openmp", 0, 0, A_IGNORE}, {"-qopenmp", 0, 0, A_IGNORE},
    {"-o", 1, 1, A_OUT},
    {"-k", 0, 0, A_KEEP}, {"--keep", 0, 0, A_KEEP},
    {"--dump-pragmas", 0, 0, A_DUMP}, {"-v", 0, 0, A_VERBOSE},
    {"--backend=", 1, 0, A_BACKEND},
    {"--no-write-detection", 0, 0, A_NO_WD},
    {"-x", 1, 1, A_LANG},
    {"-M", 0, 0, A_DEPS_ONLY}, {"-MM", 0, 0, A_DEPS_ONLY},
    {"-MD", 0, 0, A_DEPS_MD}, {"-MMD", 0, 0, A_DEPS_MD},
    {"-MP", 0, 0, A_DEPS}, {"-MG", 0, 0, A_DEPS},
    {"-MF", 1, 1, A_DEPS_MF}, {"-MT", 1, 1, A_DEPS_MT}, {"-MQ", 1, 1, A_DEPS_MT},
    {"-I", 1, 1, A_PP}, {"-D", 1, 1, A_PP}, {"-U", 1, 1, A_PP},
    {"-include", 0, 1, A_PP}, {"-imacros", 0, 1, A_PP}, {"-isystem", 0, 1, A_PP},
    {"-idirafter", 0, 1, A_PP}, {"-iquote", 0, 1, A_PP}, {"-iprefix", 0, 1, A_PP},
    {"-iwithprefix", 0, 1, A_PP}, {"-Xpreprocessor", 0, 1, A_PP},
    {"-nostdinc", 0, 0, A_PP}, {"-undef", 0, 0, A_PP}, {"-trigraphs", 0, 0, A_PP},
    {"-Wp,", 1, 0, A_PP},
    {"-L", 1, 1, A_LINK}, {"-l", 1, 1, A_LINK}, {"-Xlinker", 0, 1, A_LINK},
    {"-T", 0, 1, A_LINK}, {"-u", 0, 1, A_LINK}, {"-z", 0, 1, A_LINK},
    {"-Wl,", 1, 0, A_LINK}, {"-static", 0, 0, A_LINK}, {"-shared", 0, 0, A_LINK},
    {"-rdynamic", 0, 0, A_LINK}, {"-pie", 0, 0, A_LINK}, {"-no-pie", 0, 0, A_LINK},
    {"-nostdlib", 0, 0, A_LINK}, {"-nostartfiles", 0, 0, A_LINK},
    {"-nodefaultlibs", 0, 0, A_LINK}, {"-s", 0, 0, A_LINK},
    {"-static-", 1, 0, A_LINK},
    {"-std=", 1, 0, A_STD}, {"-ansi", 0, 0, A_STD},
    /* LLVM's options (the write-detection pass's among them): compile only */
    {"-mllvm", 0, 1, A_CC},
    {"-O", 1, 0, A_CODEGEN}, {"-pthread", 0, 0, A_CODEGEN}, {"-f", 1, 0, A_CODEGEN},
    {"-m", 1, 0, A_CODEGEN}, {"--target=", 1, 0, A_CODEGEN},
    {"-target", 0, 1, A_CODEGEN}, {"-isysroot", 0, 1, A_CODEGEN},
    {"--sysroot", 1, 1, A_CODEGEN},
    {"-g", 1, 0, A_CC}, {"-W", 1, 0, A_CC}, {"-w", 0, 0, A_CC},
    {"-pedantic", 1, 0, A_CC}, {"-Wa,", 1, 0, A_CC}, {"-Xassembler", 0, 1, A_CC},
    {"-pipe", 0, 0, A_CC},
    {"-Xclang", 0, 1, A_OTHER},
};

static const struct optdef *find_option(const char *a)
{
    static const struct optdef other = {"", 0, 0, A_OTHER};
    for (size_t i = 0; i < sizeof options / sizeof *options; i++) {
        const struct optdef *d = &options[i];
        if (!strcmp(a, d->name) || (d->prefix && starts(a, d->name)))
            return d;
    }
    return &other;
}

/* Pushes a and, when given, its argument. */
static void push2(strvec *v, const char *a, const char *arg)
{
    push(v, a);
    if (arg)
        push(v, arg);
}

/* Applies option a (arg: its separate argument, or NULL); 0, 1 to stop
 * with success (--help), -1 after an error message. */
static int apply_option(opts *o, const struct optdef *d, char *a, char *arg,
                        const char **lang)
{
    size_t nl = strlen(d->name);
    switch (d->act) {
    case A_HELP:
        usage(stdout);
        return 1;
    case A_VERSION: o->version = 1; break;
    case A_COMPILE: o->mode = MODE_COMPILE; break;
    case A_ASM: o->mode = MODE_ASM; break;
    case A_PREPROCESS: o->mode = MODE_PREPROCESS; break;
    case A_IGNORE: /* implied */
        if (starts(a, "-fopenmp="))
            tr_diag_warning("'%s' ignored: libompdsm is the OpenMP runtime of "
                            "every ompcc program", a);
        break;
    case A_OUT: o->out = tr_xstrdup(arg ? arg : a + nl); break;
    case A_KEEP: o->keep = 1; break;
    case A_DUMP: o->dump = 1; break;
    case A_VERBOSE: o->verbose = 1; break;
    case A_NO_WD: o->no_wd = 1; break;
    case A_BACKEND:
        free(o->backend);
        o->backend = tr_xstrdup(a + nl);
        break;
    case A_LANG: {
        const char *l = arg ? arg : a + nl;
        *lang = !strcmp(l, "none") ? NULL : l;
        if (*lang && strcmp(*lang, "c") && strcmp(*lang, "cpp-output")) {
            fprintf(stderr, "ompcc: error: language '%s' is not supported "
                            "(only C)\n", *lang);
            return -1;
        }
        break;
    }
    case A_DEPS_ONLY: o->deps_only = 1; push(&o->deps, a); break;
    case A_DEPS_MD: o->md = 1; push(&o->deps, a); break;
    case A_DEPS: push(&o->deps, a); break;
    case A_DEPS_MF:
        free(o->mf);
        o->mf = tr_xstrdup(arg ? arg : a + nl);
        break;
    case A_DEPS_MT:
        o->have_mt = 1;
        push(&o->deps, arg ? a : tr_xstrndup(a, nl));
        push(&o->deps, arg ? arg : a + nl);
        break;
    case A_PP: push2(&o->pp, a, arg); break;
    case A_LINK:
        if (starts(a, "-l")) {
            const char *lib = arg ? arg : a + 2;
            if (!strcmp(lib, "gomp") || !strcmp(lib, "omp") ||
                !strcmp(lib, "iomp5") || !strcmp(lib, "omp5")) {
                /* its omp_* functions would take the place of
                 * libompdsm's: every node would see a team of one */
                tr_diag_warning("'-l%s' dropped: libompdsm is the OpenMP "
                                "runtime of every ompcc program (with lib%s, "
                                "omp_* calls would not reach it)", lib, lib);
                break;
            }
        }
        push2(&o->link, a, arg);
        break;
    case A_STD:
        push(&o->pp, a);
        push(&o->parse, a);
        push(&o->cc, a);
        break;
    case A_CODEGEN:
        push2(&o->pp, a, arg);
        push2(&o->cc, a, arg);
        push2(&o->link, a, arg);
        if (starts(a, "-m") || starts(a, "--target=") ||
            !strcmp(a, "-funsigned-char") || !strcmp(a, "-fsigned-char") ||
            !strcmp(a, "-fshort-enums") || !strcmp(a, "-fshort-wchar") ||
            !strcmp(a, "-fms-extensions") || !strcmp(a, "-fgnu89-inline"))
            push2(&o->parse, a, arg);
        break;
    case A_CC:
        push2(&o->cc, a, arg);
        if (starts(a, "-g")) {
            push(&o->link, a);
            o->debug = strcmp(a, "-g0") != 0;
            o->debug_given = 1;
        }
        break;
    default:
        push2(&o->cc, a, arg);
        push2(&o->link, a, arg);
        break;
    }
    return 0;
}

static int parse_args(opts *o, int argc, char **argv)
{
    const char *lang = NULL;
    /* -w and -Werror govern ompcc's own warnings too, wherever they are
     * on the line */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-w"))
            tr_diag_no_warnings = 1;
        else if (!strcmp(argv[i], "-Werror"))
            tr_diag_werror = 1;
        else if (!strcmp(argv[i], "-Wno-error"))
            tr_diag_werror = 0;
    }
    for (int i = 1; i < argc; i++) {
        char *a = argv[i], *arg = NULL;
        if (a[0] != '-' || !a[1]) {
            if (!strcmp(a, "-")) {
                fprintf(stderr, "ompcc: error: reading a program from standard "
                                "input is not supported\n");
                return -1;
            }
            add_input(o, a, lang);
            continue;
        }
        const struct optdef *d = find_option(a);
        if (d->arg && !strcmp(a, d->name)) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ompcc: error: missing argument to '%s'\n", a);
                return -1;
            }
            arg = argv[++i];
        }
        int rc = apply_option(o, d, a, arg, &lang);
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * the steps
 * ------------------------------------------------------------------------ */

/* clang -E, or the backend's when it is gcc: preprocessed text is tied
 * to its compiler (glibc's headers differ per compiler).  gcc expands
 * macros in '#pragma omp' lines only under -fopenmp (clang always does);
 * its _OPENMP is replaced by ompdsm's. */
static void preprocess_cmd(strvec *v, const opts *o, const paths *p)
{
    if (p->gnu)
        backend(v, p);
    else
        push(v, p->clang);
    push(v, "-E");
    push(v, "-x");
    push(v, "c");
    if (p->gnu) {
        push(v, "-fopenmp");
        push(v, "-U_OPENMP");
    }
    push(v, "-isystem");
    push(v, p->incdir);
    push(v, "-D_OPENMP=200805");
    push_all(v, &o->pp);
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    size_t n = strlen(text);
    if (!f) {
        fprintf(stderr, "ompcc: error: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (fwrite(text, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "ompcc: error: cannot write %s: %s\n", path, strerror(errno));
        unlink(path);
        return -1;
    }
    return 0;
}

/* The write-detection pass for the backend compile: with a clang of the
 * LLVM it was built for, unless turned off.  -fplugin= loads it before
 * clang parses -mllvm, so that its options (-mllvm -ompdsm-wd-...) are
 * known; -fpass-plugin= runs it. */
static void wd_args(strvec *cmd, const opts *o, const paths *p)
{
    if (!p->wdpass || o->no_wd || p->gnu || p->clang_major != OMPCC_LLVM_MAJOR)
        return;
    VEC_PUSH(*cmd, tr_xasprintf("-fplugin=%s", p->wdpass));
    VEC_PUSH(*cmd, tr_xasprintf("-fpass-plugin=%s", p->wdpass));
}

/* OMPDSM_WD_COMPILE: on (or unset, or empty) or off.  0, or -1 after an
 * error message. */
static int wd_env(opts *o)
{
    const char *v = getenv("OMPDSM_WD_COMPILE");
    if (!v || !*v || !strcmp(v, "on"))
        return 0;
    if (!strcmp(v, "off")) {
        o->no_wd = 1;
        return 0;
    }
    fprintf(stderr, "ompcc: error: OMPDSM_WD_COMPILE='%s' is not valid: "
                    "expected on or off\n", v);
    return -1;
}

/* Preprocesses, translates and compiles one C (or .i) input to in->obj. */
static int compile_one(opts *o, const paths *p, input *in, const char *obj)
{
    char *base = stem(in->path), *ipath, *cpath, *text = NULL, *abi;
    strvec cmd = {0}, parse;
    translate_opts to;
    int rc;

    if (in->kind == IN_C) {
        ipath = tmpfile_named(base, ".i");
        preprocess_cmd(&cmd, o, p);
        if (o->md) {
            push_all(&cmd, &o->deps);
            if (!o->have_mt) {
                push(&cmd, "-MT");
                push(&cmd, obj);
            }
            push(&cmd, "-MF");
            if (o->mf) {
                push(&cmd, o->mf);
            } else {
                char *d = dir_of(obj), *s = stem(obj);
                VEC_PUSH(cmd, tr_xasprintf("%s/%s.d", d, s));
                free(d);
                free(s);
            }
        }
        push(&cmd, in->path);
        push(&cmd, "-o");
        push(&cmd, ipath);
        rc = run(&cmd, o->verbose);
        if (rc != 0)
            return 1;
    } else {
        ipath = in->path;
    }

    memset(&to, 0, sizeof to);
    parse = o->parse;
    if (p->gnu) {
        /* gcc's text is preprocessed with its -m options already; of
         * those, clang's parse needs the word size only (it rejects some
         * of gcc's: -mfpmath=387, -mindirect-branch=, gcc's CPU names) */
        int k;
        memset(&parse, 0, sizeof parse);
        for (k = 0; k < o->parse.n; k++) {
            const char *s = o->parse.v[k];
            if (!starts(s, "-m") || !strcmp(s, "-m16") || !strcmp(s, "-m32") ||
                !strcmp(s, "-m64") || !strcmp(s, "-mx32"))
                push(&parse, s);
        }
    }
    to.clang_args = (const char *const *)parse.v;
    to.nclang_args = parse.n;
    abi = tr_xasprintf("%s/ompdsm_abi.h", p->incdir);
    to.abi_header = abi;
    to.dump_pragmas = o->dump;
    to.debug_lines = o->debug;
    to.gnu_text = p->gnu;
    rc = tr_translate_file(ipath, &to, &text);
    free(abi);
    if (o->dump) {
        if (text)
            fputs(text, stdout);
        free(text);
        return rc;
    }
    if (rc != 0)
        return 1;

    if (o->keep) { /* beside the output */
        char *d = o->out ? dir_of(o->out) : tr_xstrdup(".");
        cpath = tr_xasprintf("%s/%s.ompdsm.c", d, base);
        free(d);
    } else {
        cpath = tmpfile_named(base, ".ompdsm.c");
    }
    if (write_file(cpath, text) < 0)
        return 1;
    free(text);

    cmd.n = 0;
    backend(&cmd, p);
    push(&cmd, "-x");
    push(&cmd, "c");
    push(&cmd, o->mode == MODE_ASM ? "-S" : "-c");
    push(&cmd, "-Wno-error=implicit-int");
    push(&cmd, "-Wno-error=implicit-function-declaration");
    push(&cmd, "-Wno-error=int-conversion");
    push(&cmd, "-Wno-error=incompatible-pointer-types");
    /* Line tables only, so that deadlock and status reports say file:line
     * without -g; they do not change the code.  gcc (and any backend
     * named by OMPDSM_CC) spells it -g1. */
    if (!o->debug_given)
        push(&cmd, p->named ? "-g1" : "-gline-tables-only");
    wd_args(&cmd, o, p);
    push_all(&cmd, &o->cc);
    push(&cmd, cpath);
    push(&cmd, "-o");
    push(&cmd, obj);
    rc = run(&cmd, o->verbose);
    free(base);
    return rc != 0 ? 1 : 0;
}

static int do_link(opts *o, const paths *p)
{
    strvec cmd = {0};
    int i;
    backend(&cmd, p);
    for (i = 0; i < o->link.n; i++) {
        const char *s = o->link.v[i];
        if (s[0] == '\001')
            push(&cmd, o->inputs.v[atoi(s + 1)].obj);
        else
            push(&cmd, s);
    }
    VEC_PUSH(cmd, tr_xasprintf("-L%s", p->libdir));
    VEC_PUSH(cmd, tr_xasprintf("-Wl,-rpath,%s", p->libdir));
    push(&cmd, "-lompdsm");
    push(&cmd, "-lm");
    push(&cmd, "-lpthread");
    push(&cmd, "-o");
    push(&cmd, o->out ? o->out : "a.out");
    return run(&cmd, o->verbose) != 0 ? 1 : 0;
}

int tr_driver_main(int argc, char **argv)
{
    opts o;
    paths p;
    int i, r, nsrc = 0;
    memset(&o, 0, sizeof o);
    r = parse_args(&o, argc, argv);
    /* tr_diag_errors: a warning under -Werror */
    if (r < 0 || tr_diag_errors || wd_env(&o) < 0)
        return 1;
    if (r > 0)
        return 0;
    if (o.version) { /* after the whole line: --backend= may follow */
        int gone;
        find_paths(&p);
        gone = find_backend(&p, o.backend, 0) < 0;
        printf("ompcc (ompdsm) %s\nclang: %s\nbackend:", OMPCC_VERSION, p.clang);
        for (i = 0; i < p.cc.n; i++)
            printf(" %s", p.cc.v[i]);
        printf("%s\n", gone ? " (cannot be run)"
                       : p.gnu ? " (GNU C: it preprocesses too)" : "");
        return 0;
    }
    if (!o.inputs.n) {
        fprintf(stderr, "ompcc: error: no input files\n");
        return 1;
    }
    find_paths(&p);
    if (find_backend(&p, o.backend, o.verbose) < 0)
        return 1;
    for (i = 0; i < o.inputs.n; i++)
        if (o.inputs.v[i].kind == IN_C || o.inputs.v[i].kind == IN_I)
            nsrc++;

    if (o.mode == MODE_PREPROCESS || o.deps_only) {
        strvec cmd = {0};
        preprocess_cmd(&cmd, &o, &p);
        push_all(&cmd, &o.deps);
        if (o.mf) {
            push(&cmd, "-MF");
            push(&cmd, o.mf);
        }
        for (i = 0; i < o.inputs.n; i++)
            push(&cmd, o.inputs.v[i].path);
        if (o.out) {
            push(&cmd, "-o");
            push(&cmd, o.out);
        }
        return run(&cmd, o.verbose) != 0 ? 1 : 0;
    }
    if (o.dump) {
        int rc = 0;
        for (i = 0; i < o.inputs.n; i++)
            if (o.inputs.v[i].kind == IN_C || o.inputs.v[i].kind == IN_I)
                rc |= compile_one(&o, &p, &o.inputs.v[i], "/dev/null");
        return rc ? 1 : 0;
    }
    if (o.out && o.mode != MODE_LINK && o.inputs.n > 1 && nsrc > 1) {
        fprintf(stderr, "ompcc: error: cannot specify -o with -c or -S and "
                        "several source files\n");
        return 1;
    }

    for (i = 0; i < o.inputs.n; i++) {
        input *in = &o.inputs.v[i];
        char *s;
        if (in->kind == IN_OTHER) {
            in->obj = tr_xstrdup(in->path);
            continue;
        }
        s = stem(in->path);
        if (o.mode == MODE_LINK)
            in->obj = tmpfile_named(s, ".o");
        else if (o.out)
            in->obj = tr_xstrdup(o.out);
        else
            in->obj = tr_xasprintf("%s%s", s, o.mode == MODE_ASM ? ".s" : ".o");
        free(s);
        if (in->kind == IN_ASM) {
            strvec cmd = {0};
            if (o.mode == MODE_ASM) /* nothing to do for cc -S x.s */
                continue;
            backend(&cmd, &p);
            push_all(&cmd, &o.pp);
            push_all(&cmd, &o.cc);
            push(&cmd, "-c");
            push(&cmd, in->path);
            push(&cmd, "-o");
            push(&cmd, in->obj);
            if (run(&cmd, o.verbose) != 0)
                return 1;
        } else if (compile_one(&o, &p, in, in->obj) != 0) {
            return 1;
        }
    }
    if (o.mode == MODE_LINK)
        return do_link(&o, &p);
    return 0;
}
