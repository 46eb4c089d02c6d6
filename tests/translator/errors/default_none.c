/* default(none): every variable the region uses needs a clause (loop
 * variables of work-sharing loops, threadprivate and const variables
 * excepted). */
int g;
const int limit = 10;
int main(void)
{
    int i, n = 10, s = 0;
#pragma omp parallel for default(none) reduction(+:s)
    for (i = 0; i < limit; i++)
        s += i * n + g;
    return s;
}
/* expect: default_none.c:11:18: error: variable 'n' must have its data sharing specified explicitly: '#pragma omp parallel for' at line 9 has default(none) */
/* expect: default_none.c:11:22: error: variable 'g' must have its data sharing specified explicitly: '#pragma omp parallel for' at line 9 has default(none) */
