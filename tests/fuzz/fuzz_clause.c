/* tests/fuzz/fuzz_clause.c - libFuzzer target: ompcc's `#pragma omp` line
 * parser (tr_pragma_parse) and the canonical form of what it accepts
 * (tr_pragma_format), on arbitrary text.  The parser sees one line without
 * its newline, as the translator hands it over; an accepted pragma's
 * canonical form must parse again. */
#include "pragma.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse_one(const char *text, unsigned len, int again)
{
    omp_pragma p;
    pragma_msg err, warns[8];
    int nwarns = 0;
    if (!tr_pragma_is_omp(text, len))
        return;
    memset(&p, 0, sizeof p);
    if (tr_pragma_parse(text, 0, len, &p, &err, warns, &nwarns, 8) < 0) {
        if (err.off > len || !memchr(err.msg, 0, sizeof err.msg) ||
            !err.msg[0])
            abort(); /* an error points into the line and says why */
        return;
    }
    if (nwarns < 0 || nwarns > 8)
        abort();
    tr_sbuf out;
    tr_sb_init(&out);
    tr_sb_puts(&out, "#pragma omp ");
    tr_pragma_format(&p, text, &out);
    tr_pragma_free(&p);
    if (again) {
        /* Accepted in context-free form, so accepted again. */
        omp_pragma q;
        memset(&q, 0, sizeof q);
        nwarns = 0;
        if (tr_pragma_parse(out.s, 0, (unsigned)out.n, &q, &err, warns, &nwarns,
                            8) == 0)
            tr_pragma_free(&q);
    }
    tr_sb_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    /* A NUL-terminated copy of the exact length: overreads show. */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    size_t len = size;
    char *nl = memchr(text, '\n', size);
    if (nl)
        len = (size_t)(nl - text);
    parse_one(text, (unsigned)len, 1);
    free(text);
    return 0;
}
