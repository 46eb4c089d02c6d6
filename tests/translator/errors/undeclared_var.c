/* A variable named in a clause that does not exist. */
int main(void)
{
    int i, s = 0;
#pragma omp parallel for reduction(+:total) private(tmp)
    for (i = 0; i < 10; i++)
        s += i;
    return s;
}
/* expect: undeclared_var.c:5:38: error: use of undeclared identifier 'total' in 'reduction' */
/* expect: undeclared_var.c:5:53: error: use of undeclared identifier 'tmp' in 'private' */
