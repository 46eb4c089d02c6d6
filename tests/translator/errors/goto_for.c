/* goto may not leave or enter the loop of an omp for. */
int main(void)
{
    int i, x = 0;
#pragma omp parallel
    {
        if (x)
            goto in;
#pragma omp for
        for (i = 0; i < 10; i++) {
in:
            if (i == 3)
                goto out;
            x++;
        }
out:
        x++;
    }
    return x;
}
/* gcc: rejects */
/* expect: goto_for.c:8:13: error: 'goto in' cannot jump into the block of '#pragma omp for' (line 9) */
/* expect: goto_for.c:13:17: error: 'goto out' cannot leave the block of '#pragma omp for' (line 9) */
