/* break may not leave a loop whose iterations are shared. */
int main(void)
{
    int i, j, x = 0;
#pragma omp parallel for
    for (i = 0; i < 10; i++) {
        for (j = 0; j < 10; j++)
            if (j == 3)
                break;
        switch (i) {
        case 4:
            break;
        }
        if (i == 5)
            break;
        x++;
    }
    return x;
}
/* gcc: rejects */
/* expect: break_omp_for.c:15:13: error: 'break' cannot leave the loop of '#pragma omp parallel for' (line 5): its iterations are shared among threads */
