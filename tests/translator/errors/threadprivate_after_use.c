/* threadprivate must come before the variable's first use. */
int x;
int f(void) { return x; }
#pragma omp threadprivate(x)
int main(void)
{
    return f();
}
/* gcc: rejects */
/* expect: threadprivate_after_use.c:4:27: error: 'x' declared threadprivate after its first use (line 3): put the directive before any use */
