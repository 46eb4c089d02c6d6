/* A typedef of a variable-length array type declared in the function and
 * named inside a region: its bounds were evaluated in the enclosing
 * function, the outlined function cannot re-declare it (variables of that
 * type are fine: they are declared with the array type written out). */
int main(int argc, char **argv)
{
    int n = argc + 3, i;
    typedef double row[n];
    row v;
    (void)argv;
#pragma omp parallel for
    for (i = 0; i < n; i++) {
        row tmp;
        tmp[0] = i;
        v[i] = tmp[0] + sizeof(row);
    }
    return (int)v[0];
}
/* expect: vla.c:13:9: error: type 'row' is a variable-length array type declared by a typedef in the function: a parallel region cannot name it (write the array type in full) */
/* expect: vla.c:15:32: error: type 'row' is a variable-length array type declared by a typedef in the function: a parallel region cannot name it (write the array type in full) */
