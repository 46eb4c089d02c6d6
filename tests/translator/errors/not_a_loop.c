/* #pragma omp for must be followed by a for loop. */
int main(void)
{
    int i = 0;
#pragma omp parallel
    {
#pragma omp for
        while (i < 10)
            i++;
    }
    return i;
}
/* expect: not_a_loop.c:8:9: error: a 'for' loop must follow '#pragma omp for' */
