/* collapse(2) needs two perfectly nested loops. */
double a[10][10];
int main(void)
{
    int i, j;
#pragma omp parallel for collapse(2)
    for (i = 0; i < 10; i++) {
        a[i][0] = 0;
        for (j = 0; j < 10; j++)
            a[i][j] = i + j;
    }
    return 0;
}
/* expect: collapse.c:7:30: error: collapse(2) needs 2 perfectly nested loops */
