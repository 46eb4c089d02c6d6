/* A function-static variable of a type declared in the function cannot
 * move to file scope: a documented limitation. */
int main(void)
{
    struct counter { int n; };
    static struct counter c;
    c.n++;
    return c.n;
}
/* expect: static_local_type.c:6:27: error: static variable 'c' has a type declared inside a function: it cannot be moved to the shared heap (declare the type at file scope) */
