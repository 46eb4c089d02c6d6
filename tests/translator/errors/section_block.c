/* sections are directly nested in the block of sections (OpenMP 3.0,
 * 2.5.2): not in a block inside it (the block would be the first section,
 * with a section inside), on `parallel sections` and `sections`. */
int main(void)
{
    int a = 0, b = 0;
#pragma omp parallel sections
    {
        {
#pragma omp section
            a = 1;
        }
#pragma omp section
        b = 2;
    }
#pragma omp parallel
    {
#pragma omp sections
        {
            {
                b += 1;
#pragma omp section
                b += 2;
            }
#pragma omp section
            a += 1;
        }
    }
    return a + b;
}
/* expect: section_block.c:10:13: error: '#pragma omp section' must be directly inside the block of the '#pragma omp parallel sections' of line 7, not in a block nested in it */
/* expect: section_block.c:22:13: error: '#pragma omp section' must be directly inside the block of the '#pragma omp sections' of line 18, not in a block nested in it */
/* gcc: rejects */
