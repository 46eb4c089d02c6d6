/* loop.c - FileCheck test of the write-detection pass's loop optimisation
 * (wd.py runs clang-19 -O2 -fno-vectorize -fno-unroll-loops -S -emit-llvm
 * with the pass, with the optimisation (prefix LOOP) and without it
 * (prefix EACH), and FileCheck with this file).
 *
 * fill: a contiguous store every iteration; one OMPDSM_wd_mark after the
 * loop over n doubles, nothing in the loop.  Without the optimisation the
 * loop marks each store in place (the inline shadow store of 8 bytes,
 * 0x0F0F).  every_other: a stride of two elements is not contiguous:
 * one OMPDSM_wd_mark_strided (8 bytes every 16, n times) before the loop and
 * one after it, nothing in the loop; without the optimisation a mark per
 * store. */

void fill(double *a, long n)
{
    for (long i = 0; i < n; i++)
        a[i] = 1.0;
}

void every_other(double *a, long n)
{
    for (long i = 0; i < n; i++)
        a[2 * i] = 2.0;
}

// LOOP-LABEL: define{{.*}} void @fill(
// LOOP:       [[HEAD:[0-9]+]]:{{.*}}preds = {{.*}}%[[HEAD]]
// LOOP-NOT:   OMPDSM_wd_mark
// LOOP-NOT:   store i16 3855
// LOOP:       store double 1.0{{.*}}
// LOOP-NOT:   OMPDSM_wd_mark
// LOOP-NOT:   store i16 3855
// LOOP:       br i1 %{{[0-9]+}}, label %{{[0-9]+}}, label %[[HEAD]]
// LOOP:       [[LEN:%[0-9]+]] = shl i64 %1, 3
// LOOP:       call void @OMPDSM_wd_mark(ptr %0, i64 [[LEN]])
// LOOP-NOT:   OMPDSM_wd_mark
// LOOP:       {{^}}}
// LOOP-LABEL: define{{.*}} void @every_other(
// LOOP:       call void @OMPDSM_wd_mark_strided(ptr %0, i64 8, i64 16, i64 %1)
// LOOP-NOT:   store i16 3855
// LOOP:       store double 2.0{{.*}}
// LOOP-NOT:   store i16 3855
// LOOP:       call void @OMPDSM_wd_mark_strided(ptr %0, i64 8, i64 16, i64 %1)
// LOOP-NOT:   OMPDSM_wd_mark
// LOOP:       {{^}}}

// EACH-LABEL: define{{.*}} void @fill(
// EACH:       store double 1.0{{.*}}
// EACH:       store i16 3855
// EACH-NOT:   OMPDSM_wd_mark
// EACH:       {{^}}}

// EACH-LABEL: define{{.*}} void @every_other(
// EACH:       store double 2.0{{.*}}
// EACH:       store i16 3855
// EACH-NOT:   OMPDSM_wd_mark
// EACH:       {{^}}}

/* one_store: no loop and one mark, so no plain copy (PLAIN, the default:
 * fill and every_other get one each, whose code has no mark, and which
 * their entries call, with their arguments, while the runtime's size is
 * 0).  pivot: no loop, but nine stores (none next to another, so no two
 * become one vector store), as many as -ompdsm-wd-plain-min's 8 and more:
 * a plain copy too. */
void one_store(double *a)
{
    a[0] = 3.0;
}

void pivot(double *l, double *r)
{
    double p = 1.0 / l[0];
    l[5] *= p;
    l[10] *= p;
    l[15] *= p;
    l[20] *= p;
    r[0] *= p;
    double c = l[3];
    l[25] -= c * l[5];
    l[30] -= c * l[10];
    l[35] -= c * l[15];
    r[4] -= c * r[0];
}

// PLAIN-LABEL: define{{.*}} void @fill(
// PLAIN:       @OMPDSM_wd_size
// PLAIN:       tail call void @fill.ompdsm_plain(ptr {{.*}}%0, i64 {{.*}}%1)
// PLAIN-NEXT:  ret void
// PLAIN:       call void @OMPDSM_wd_mark
// PLAIN:       {{^}}}
// PLAIN-LABEL: define{{.*}} void @every_other(
// PLAIN:       tail call void @every_other.ompdsm_plain(
// PLAIN:       call void @OMPDSM_wd_mark_strided
// PLAIN:       {{^}}}
// PLAIN-LABEL: define{{.*}} void @one_store(
// PLAIN-NOT:   ompdsm_plain
// PLAIN:       store i16 3855
// PLAIN:       {{^}}}
// PLAIN-LABEL: define{{.*}} void @pivot(
// PLAIN:       tail call void @pivot.ompdsm_plain(ptr {{.*}}%0, ptr {{.*}}%1)
// PLAIN-NEXT:  ret void
// PLAIN:       store i16 3855
// PLAIN:       {{^}}}
// PLAIN-LABEL: define internal void @fill.ompdsm_plain(
// PLAIN-NOT:   OMPDSM_wd
// PLAIN-NOT:   3855
// PLAIN:       {{^}}}
// PLAIN-LABEL: define internal void @every_other.ompdsm_plain(
// PLAIN-NOT:   OMPDSM_wd
// PLAIN-NOT:   3855
// PLAIN:       {{^}}}
// PLAIN-LABEL: define internal void @pivot.ompdsm_plain(
// PLAIN-NOT:   OMPDSM_wd
// PLAIN-NOT:   3855
// PLAIN:       {{^}}}
// PLAIN-NOT:   ompdsm_plain(
