/* A variable-length array shared by a region: a documented limitation. */
int main(int argc, char **argv)
{
    int n = argc + 3, i;
    double v[n];
    (void)argv;
#pragma omp parallel for
    for (i = 0; i < n; i++)
        v[i] = i;
    return (int)v[0];
}
/* expect: vla.c:5:12: error: variable 'v' is a variable-length array shared by a parallel region: not supported */
