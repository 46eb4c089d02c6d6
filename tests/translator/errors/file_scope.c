/* Only threadprivate (and ignored declare simd) may appear at file scope. */
#pragma omp barrier
int main(void)
{
    return 0;
}
/* expect: file_scope.c:2:13: error: '#pragma omp barrier' must appear inside a function */
