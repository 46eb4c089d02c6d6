/* globals initialised with macros of system headers (NULL, INT_MAX,
   EXIT_SUCCESS) in a declaration list, as NPB IS declares key_buff1_aptr:
   gcc -E (ompcc's preprocessor with the gcc backend) puts line markers
   around such expansions, between the '=' and the initializer. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

int key_array[64],
    key_buff[64],
    **key_aptr = NULL;
int *gp = NULL, biggest = INT_MAX, status = EXIT_SUCCESS;
char *names[2] = {NULL, "b"};

int main(void)
{
    int i, bad = 0;
#pragma omp parallel for
    for (i = 0; i < 64; i++)
        key_array[i] = i;
#pragma omp parallel for reduction(+:bad)
    for (i = 0; i < 64; i++) {
        key_buff[i] = key_array[63 - i];
        bad += key_aptr != NULL || gp != NULL || names[0] != NULL;
    }
    long sum = 0;
    for (i = 0; i < 64; i++)
        sum += key_buff[i] * (long)(i + 1);
    printf("sum %ld bad %d max %d status %d %s\n", sum, bad, biggest == INT_MAX,
           status, names[1]);
    return bad != 0;
}
