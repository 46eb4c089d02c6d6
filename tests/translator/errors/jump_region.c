/* goto into, and return, break or continue out of, a parallel region: the
 * region's block becomes a function of its own. */
int main(void)
{
    int i, x = 0;
    goto in;
#pragma omp parallel
    {
in:
        x++;
        if (x > 5)
            return 1;
    }
    for (i = 0; i < 3; i++) {
#pragma omp parallel
        {
            if (x)
                break;
            if (i)
                continue;
        }
    }
    return x;
}
/* gcc: rejects */
/* expect: jump_region.c:6:5: error: 'goto in' cannot jump into the block of '#pragma omp parallel' (line 7) */
/* expect: jump_region.c:12:13: error: 'return' cannot leave the block of '#pragma omp parallel' (line 7) */
/* expect: jump_region.c:18:17: error: 'break' cannot leave the block of '#pragma omp parallel' (line 15) */
/* expect: jump_region.c:20:17: error: 'continue' cannot leave the block of '#pragma omp parallel' (line 15) */
