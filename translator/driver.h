/* driver.h - ompcc's compiler driver: cc-compatible options, the clang -E
 * / translate / backend compile / link pipeline, and where the runtime's
 * headers, library and clang are found (build tree or installation). */
#ifndef OMPCC_DRIVER_H
#define OMPCC_DRIVER_H

/* Runs ompcc with the given command line; returns the exit status. */
int tr_driver_main(int argc, char **argv);

#endif
