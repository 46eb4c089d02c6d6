/* ompcc.c - the ompcc command: an OpenMP C compiler for ompdsm.  It
 * preprocesses with clang, translates OpenMP to calls of libompdsm's ABI
 * (translate.c) and compiles and links with the backend (driver.c). */
#include "driver.h"

int main(int argc, char **argv)
{
    return tr_driver_main(argc, argv);
}
