/* translate.c - runs the translation of one preprocessed unit: libclang
 * parse (without -fopenmp: the full C tree), the model, the analyses, the
 * edits, and the assembled output. */
#include "translate.h"
#include "tu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tr_tu_error(tu *t, unsigned off, const char *fmt, ...)
{
    const char *file;
    int line, col;
    va_list ap;
    tr_srcmap_presumed(&t->map, off, &file, &line, &col);
    va_start(ap, fmt);
    tr_diag_print(file, line, col, "error", fmt, ap);
    va_end(ap);
}

void tr_tu_warning(tu *t, unsigned off, const char *fmt, ...)
{
    const char *file;
    int line, col;
    va_list ap;
    tr_srcmap_presumed(&t->map, off, &file, &line, &col);
    va_start(ap, fmt);
    tr_diag_print(file, line, col, "warning", fmt, ap);
    va_end(ap);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    buf = tr_xmalloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

/* libclang's errors, with the user's file and line (presumed locations).
 * In text gcc preprocessed, errors inside system headers are gcc's
 * business, not the program's: gcc's own headers (x86 intrinsics, ...) are
 * written for gcc's builtins and clang rejects parts of them; the backend
 * compiles those headers and reports what is really wrong there. */
static int parse_diagnostics(tu *t, int gnu_text)
{
    unsigned i, n = clang_getNumDiagnostics(t->ctu);
    int errors = 0;
    for (i = 0; i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(t->ctu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
        if (sev >= CXDiagnostic_Error) {
            CXString file, msg = clang_getDiagnosticSpelling(d);
            unsigned line = 0, col = 0;
            CXSourceLocation loc = clang_getDiagnosticLocation(d);
            if (gnu_text && sev == CXDiagnostic_Error &&
                clang_Location_isInSystemHeader(loc)) {
                clang_disposeString(msg);
                clang_disposeDiagnostic(d);
                continue;
            }
            clang_getPresumedLocation(loc, &file, &line, &col);
            if (line)
                fprintf(stderr, "%s:%u:%u: %s: %s\n", clang_getCString(file), line,
                        col, sev == CXDiagnostic_Fatal ? "fatal error" : "error",
                        clang_getCString(msg));
            else
                fprintf(stderr, "ompcc: error: %s\n", clang_getCString(msg));
            clang_disposeString(file);
            errors++;
            tr_diag_errors++;
        }
        clang_disposeString(clang_getDiagnosticSpelling(d));
        clang_disposeDiagnostic(d);
    }
    return errors;
}

int tr_translate_file(const char *ipath, const translate_opts *o, char **out)
{
    static const char *const base_args[] = {
        "-x", "c", "-Wno-error=implicit-int",
        "-Wno-error=implicit-function-declaration", "-Wno-error=int-conversion",
        "-Wno-error=incompatible-pointer-types", "-ferror-limit=0"};
    /* Text gcc preprocessed is final: -undef keeps clang's predefined
     * macros (__clang_major__, ...) from expanding identifiers that gcc
     * left alone.  gcc's glibc headers use gcc's keywords for the
     * ISO/IEC TS 18661-3 types (glibc typedefs them for other compilers)
     * and gcc 11's __malloc__(deallocator, n); clang 19 knows neither.
     * gcc's x86 address-space keywords are macros in clang, so -undef
     * needs them back.  For the parse only: the output keeps gcc's
     * spelling. */
    static const char *const gnu_args[] = {
        "-undef", "-D_Float32=float", "-D_Float64=double", "-D_Float32x=double",
        "-D_Float64x=long double", "-D_Float128=__float128",
        "-D__malloc__(...)=__malloc__",
        "-D__seg_fs=__attribute__((address_space(257)))",
        "-D__seg_gs=__attribute__((address_space(256)))"};
    const int nbase = (int)(sizeof base_args / sizeof base_args[0]);
    const int ngnu = o->gnu_text ? (int)(sizeof gnu_args / sizeof gnu_args[0]) : 0;
    tu t;
    size_t len;
    char *text, *abi = NULL;
    const char **args;
    int nargs = 0, i, rc;
    enum CXErrorCode err;

    memset(&t, 0, sizeof t);
    t.mark_user = o->debug_lines && !o->dump_pragmas;
    text = read_file(ipath, &len);
    if (!text)
        tr_internal_error("cannot read %s", ipath);
    t.ipath = ipath;
    t.text = text;
    t.len = (unsigned)len;
    tr_srcmap_init(&t.map, text, t.len);

    args = tr_xmalloc((size_t)(nbase + ngnu + o->nclang_args) * sizeof *args);
    for (i = 0; i < nbase; i++)
        args[nargs++] = base_args[i];
    for (i = 0; i < ngnu; i++)
        args[nargs++] = gnu_args[i];
    for (i = 0; i < o->nclang_args; i++)
        args[nargs++] = o->clang_args[i];
    t.index = clang_createIndex(0, 0);
    err = clang_parseTranslationUnit2(t.index, ipath, args, nargs, NULL, 0,
                                      CXTranslationUnit_None, &t.ctu);
    free(args);
    if (err != CXError_Success)
        tr_internal_error("libclang could not parse %s (error %d)", ipath, (int)err);
    if (parse_diagnostics(&t, o->gnu_text))
        return 1;

    tr_ast_build(&t);
    rc = tr_analysis_constructs(&t);
    if (o->dump_pragmas) {
        tr_sbuf s;
        tr_sb_init(&s);
        tr_emit_dump_pragmas(&t, &s);
        *out = tr_sb_take(&s);
        return tr_diag_errors ? 1 : 0;
    }
    if (rc < 0)
        return 1;
    tr_globals_classify(&t);
    if (tr_diag_errors)
        return 1;
    if (tr_sharing_analyse(&t) < 0)
        return 1;
    tr_globals_rewrite(&t);
    if (tr_diag_errors)
        return 1;
    /* innermost constructs first: each embeds the rendered text of the
     * constructs inside it */
    for (i = t.cons.n - 1; i >= 0; i--) {
        if (t.cons.v[i].dir == DIR_PARALLEL && t.cons.v[i].func >= 0)
            tr_outline_region(&t, i);
        else
            tr_lower_construct(&t, i);
    }
    tr_globals_tables(&t);
    if (tr_diag_errors)
        return 1;
    if (o->abi_header) {
        size_t alen;
        abi = read_file(o->abi_header, &alen);
        if (!abi)
            tr_internal_error("cannot read the ABI header %s", o->abi_header);
    }
    *out = tr_emit_unit(&t, abi, o->abi_header);
    free(abi);
    if (tr_diag_errors)
        return 1;
    /* the model is freed with the process: ompcc translates few files */
    return 0;
}
