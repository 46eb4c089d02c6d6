/* srcmap.c - line markers of preprocessed text: presumed file and line of
 * every offset, and whether it lies in a system header. */
#include "tu.h"

#include <stdlib.h>
#include <string.h>

static int intern_file(srcmap *m, const char *name, size_t n)
{
    int i;
    for (i = 0; i < m->nfiles; i++)
        if (strlen(m->files[i]) == n && !memcmp(m->files[i], name, n))
            return i;
    m->files = tr_xrealloc(m->files, (size_t)(m->nfiles + 1) * sizeof *m->files);
    m->files[m->nfiles] = tr_xstrndup(name, n);
    return m->nfiles++;
}

/* `# 12 "file.c" 2 3` or `#line 12 "file.c"`: returns 1 and fills *line,
 * *file (unescaped), *sys. */
static int parse_marker(const char *s, const char *end, int *line,
                        tr_sbuf *file, int *sys)
{
    const char *p = s;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= end || *p++ != '#')
        return 0;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (end - p >= 4 && !strncmp(p, "line", 4))
        p += 4;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= end || *p < '0' || *p > '9')
        return 0;
    *line = 0;
    while (p < end && *p >= '0' && *p <= '9')
        *line = *line * 10 + (*p++ - '0');
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    file->n = 0;
    *sys = 0;
    if (p < end && *p == '"') {
        p++;
        while (p < end && *p != '"') {
            if (*p == '\\' && p + 1 < end)
                p++;
            tr_sb_putc(file, *p++);
        }
        if (p < end)
            p++;
        while (p < end) {
            if (*p == '3' && (p + 1 == end || p[1] == ' ' || p[1] == '\r'))
                *sys = 1;
            p++;
        }
    } else {
        tr_sb_puts(file, "");
        return 2; /* line number only: keep the file */
    }
    return 1;
}

void tr_srcmap_init(srcmap *m, const char *text, unsigned len)
{
    unsigned off = 0;
    int curfile = -1, curline = 1, cursys = 0, n = 0, cap = 1024;
    tr_sbuf file;
    memset(m, 0, sizeof *m);
    m->text = text;
    m->len = len;
    m->main_file = -1;
    m->line_off = tr_xmalloc((size_t)cap * sizeof *m->line_off);
    m->pfile = tr_xmalloc((size_t)cap * sizeof *m->pfile);
    m->pline = tr_xmalloc((size_t)cap * sizeof *m->pline);
    m->psys = tr_xmalloc((size_t)cap);
    tr_sb_init(&file);
    while (off <= len) {
        const char *s = text + off;
        const char *nl = memchr(s, '\n', len - off);
        const char *e = nl ? nl : text + len;
        int mline, msys, r;
        if (n == cap) {
            cap *= 2;
            m->line_off = tr_xrealloc(m->line_off, (size_t)cap * sizeof *m->line_off);
            m->pfile = tr_xrealloc(m->pfile, (size_t)cap * sizeof *m->pfile);
            m->pline = tr_xrealloc(m->pline, (size_t)cap * sizeof *m->pline);
            m->psys = tr_xrealloc(m->psys, (size_t)cap);
        }
        m->line_off[n] = off;
        m->pfile[n] = curfile;
        m->pline[n] = curline;
        m->psys[n] = (unsigned char)cursys;
        n++;
        r = parse_marker(s, e, &mline, &file, &msys);
        if (r == 1) {
            curfile = intern_file(m, file.s, file.n);
            if (m->main_file < 0)
                m->main_file = curfile;
            curline = mline;
            cursys = msys;
        } else if (r == 2) {
            curline = mline;
        } else {
            curline++;
        }
        if (!nl)
            break;
        off = (unsigned)(nl - text) + 1;
    }
    tr_sb_free(&file);
    m->nlines = n;
    if (m->main_file < 0)
        m->main_file = intern_file(m, "<stdin>", 7);
    for (n = 0; n < m->nlines; n++)
        if (m->pfile[n] < 0)
            m->pfile[n] = m->main_file;
}

static int srcmap_line_index(const srcmap *m, unsigned off)
{
    int lo = 0, hi = m->nlines - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (m->line_off[mid] <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void tr_srcmap_presumed(const srcmap *m, unsigned off, const char **file,
                        int *line, int *col)
{
    int k = srcmap_line_index(m, off);
    if (file)
        *file = m->files[m->pfile[k]];
    if (line)
        *line = m->pline[k];
    if (col)
        *col = (int)(off - m->line_off[k]) + 1;
}

int tr_srcmap_is_system(const srcmap *m, unsigned off)
{
    return m->psys[srcmap_line_index(m, off)];
}

const char *tr_srcmap_main_file(const srcmap *m)
{
    return m->files[m->main_file];
}

/* "#line N \"file\"" for the position off, followed by blanks up to its
 * column, so that what follows keeps its line and column. */
void tr_srcmap_sync(const srcmap *m, unsigned off, tr_sbuf *out)
{
    const char *file, *p;
    int line, col;
    tr_srcmap_presumed(m, off, &file, &line, &col);
    if (!out->n || out->s[out->n - 1] != '\n')
        tr_sb_putc(out, '\n');
    tr_sb_printf(out, "#line %d \"", line);
    for (p = file; *p; p++) {
        if (*p == '"' || *p == '\\')
            tr_sb_putc(out, '\\');
        tr_sb_putc(out, *p);
    }
    tr_sb_puts(out, "\"\n");
    while (--col > 0)
        tr_sb_putc(out, ' ');
}
