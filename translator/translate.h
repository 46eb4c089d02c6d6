/* translate.h - the translator's entry point: preprocessed C in,
 * translated C (ABI calls, shared globals, outlined regions) out. */
#ifndef OMPCC_TRANSLATE_H
#define OMPCC_TRANSLATE_H

typedef struct translate_opts {
    const char *const *clang_args; /* -std=, -m*, ... for libclang's parse */
    int nclang_args;
    const char *abi_header;        /* path of ompdsm_abi.h, prepended */
    int dump_pragmas;              /* print the pragma listing instead */
    int debug_lines;               /* -g: ompcc's own code stays on the
                                      line of the construct it implements */
    int gnu_text;                  /* gcc preprocessed the text: its
                                      keywords and system headers */
} translate_opts;

/* Translates the preprocessed file ipath.  Returns 0 and the translated
 * text (or the --dump-pragmas listing) in *out; 1 after printing
 * diagnostics about the program. */
int tr_translate_file(const char *ipath, const translate_opts *o, char **out);

#endif
