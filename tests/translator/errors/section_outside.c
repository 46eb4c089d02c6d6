/* section belongs inside sections. */
int main(void)
{
    int x = 0;
#pragma omp parallel
    {
#pragma omp section
        x++;
    }
    return x;
}
/* expect: section_outside.c:7:13: error: '#pragma omp section' outside '#pragma omp sections' */
/* gcc: rejects */
