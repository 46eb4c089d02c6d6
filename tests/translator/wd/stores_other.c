/* stores_other.c - stores.c's stores in a function of another file (a
 * module of its own for the write-detection pass). */
void other_fill(int *a, int lo, int hi, int v);
void other_put(double *p, double v);

void other_fill(int *a, int lo, int hi, int v)
{
    for (int i = lo; i < hi; i++)
        a[i] = v + i;
}

void other_put(double *p, double v)
{
    *p = v;
}
