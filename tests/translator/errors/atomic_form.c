/* atomic needs x op= expr, x++, x = x op expr, ... */
int main(void)
{
    int x = 0, y = 1;
#pragma omp parallel
    {
#pragma omp atomic
        x = y * 2;
    }
    return x;
}
/* expect: atomic_form.c:8:9: error: '#pragma omp atomic' needs a statement of the form x op= expr, x++, ++x, x--, --x, x = x op expr or x = expr op x */
