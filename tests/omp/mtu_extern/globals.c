/* definitions of the extern globals used by the other translation units */
#include "shared.h"

int counter = 5;
double data[NDATA];
struct config conf = {NDATA, 0.5, "conf"};
const char *labels[] = {"north", "south", "east", "west"};
int nlabels = sizeof labels / sizeof labels[0];
int *counter_ptr = &counter;          /* address of a global in this unit */
long big_table[200000] = {1, 2, 3};   /* 1.6 MB, initialised */
static int hidden = 111;              /* same name as a static in main.c */

int hidden_in_globals(void)
{
    return hidden;
}
