/* reduction variables must be arithmetic; no bitwise operators on
 * floating types. */
struct pair { int a, b; };
int main(void)
{
    struct pair p = {0, 0};
    double d = 0;
#pragma omp parallel reduction(+:p)
    p.a++;
#pragma omp parallel reduction(^:d)
    d += 1;
    return p.a + (int)d;
}
/* expect: reduction_type.c:10:13: error: reduction variable 'd' has a floating type: operator '^' is not allowed */
/* expect: reduction_type.c:8:13: error: reduction variable 'p' must have an arithmetic type */
