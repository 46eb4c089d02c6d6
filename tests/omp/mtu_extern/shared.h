/* declarations shared by the translation units of mtu_extern */
#ifndef MTU_EXTERN_SHARED_H
#define MTU_EXTERN_SHARED_H

#define NDATA 1000

struct config { int n; double factor; const char *name; };

extern int counter;
extern double data[NDATA];
extern struct config conf;
extern const char *labels[];
extern int nlabels;
extern int *counter_ptr;
extern long big_table[];

int hidden_in_globals(void);
void fill_data(void);
double sum_data(void);
void count_labels(int *chars);

#endif
