/* A clause without its argument. */
int main(void)
{
#pragma omp parallel num_threads()
    ;
    return 0;
}
/* expect: num_threads_empty.c:4:34: error: expected an expression in 'num_threads()' */
