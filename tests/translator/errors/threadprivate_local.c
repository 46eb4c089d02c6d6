/* threadprivate applies to file-scope and static variables only. */
int main(void)
{
    int x = 0;
#pragma omp threadprivate(x)
    return x;
}
/* expect: threadprivate_local.c:5:27: error: 'x' in threadprivate must be a file-scope or static variable */
