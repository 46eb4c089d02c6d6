/* Globals: every file-scope and function-static variable moves to the
 * shared heap and is used through a pointer; threadprivate and const data
 * stay private. */
int printf(const char *, ...);

struct point { int x, y; };

int counter;                                  /* tentative definition */
double grid[4][8] = {{1.0, 2.0}};
int table[] = {1, 2, 3};                      /* size from the initializer */
char greeting[] = "hello";
struct point origin = {1, 2}, *where = &origin;
int *pc = &counter;                           /* address of a global */
static long hidden;
extern int elsewhere;                         /* defined in another unit */
const int limit = 10;                         /* const: stays private */
const char *const names[] = {"a", "b"};
int (*handler)(const char *, ...) = printf;
int tp_count = 5;
#pragma omp threadprivate(tp_count)

static int next_id(void)
{
    static int calls;
    static double weights[3] = {0.5, 0.25, 0.25};
    calls++;
    return calls + (int)(weights[0] * 2);
}

int main(void)
{
    counter = elsewhere + limit + (int)(sizeof grid / sizeof grid[0][0]);
    where->x += table[2] + greeting[0] + *pc + names[0][0];
    handler("%d %ld %d\n", next_id(), hidden, tp_count);
    return 0;
}
