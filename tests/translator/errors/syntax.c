/* A C syntax error: libclang's message, with the user's file and line. */
int main(void)
{
    int x = 1
    return x;
}
/* expect: syntax.c:4:14: error: expected ';' at end of declaration */
