/* copyin copies the master's threadprivate copy: other variables have
 * no copy to fill. */
int g;
static int s;
int main(void)
{
    int l = 0;
#pragma omp parallel copyin(g, s)
    g++;
#pragma omp parallel copyin(l)
    l++;
    return g + s + l;
}
/* gcc: rejects */
/* expect: copyin_not_threadprivate.c:8:29: error: 'g' in copyin must be threadprivate (declare it with '#pragma omp threadprivate(g)') */
/* expect: copyin_not_threadprivate.c:8:32: error: 's' in copyin must be threadprivate (declare it with '#pragma omp threadprivate(s)') */
/* expect: copyin_not_threadprivate.c:10:29: error: 'l' in copyin must be threadprivate (declare it with '#pragma omp threadprivate(l)') */
