/* globalias.c - FileCheck test of the shared globals' alias scopes
 * (translator/wdpass/globalias.cpp).  wd.py compiles it as ompcc's backend
 * would compile a translated program (clang-19 -O2 -fno-vectorize
 * -fno-unroll-loops -S -emit-llvm with the plugin), with the scopes (prefix
 * SCOPES) and without them (-mllvm -ompdsm-global-scopes=false, prefix
 * NOSCOPES), and runs FileCheck with this file.
 *
 * kernel: what ompcc makes of `d[i] = tx1 * i` for two shared globals.
 * With the scopes the load of tx1 carries !alias.scope, the store to d
 * !noalias, and LICM moves the load out of the loop (before the loop, none
 * in it); without them the store to d may change tx1, which is loaded again
 * at every iteration.  param: the store goes through a parameter, which may
 * point anywhere, tx1 included: the load stays in the loop either way.
 * calls: the loads of the pointers themselves are !invariant.load (the
 * runtime sets them before main and nothing changes them after), so the
 * load of __ompdsm_g_d leaves a loop that calls an unknown function (LICM
 * drops the tag on the hoisted load); without the pass the call may change
 * the pointer, which is loaded again after it at every iteration. */

extern double(*__ompdsm_g_tx1);
extern double (*__ompdsm_g_d)[4096];

void kernel(long n)
{
    for (long i = 0; i < n; i++)
        (*__ompdsm_g_d)[i] = (*__ompdsm_g_tx1) * (double)i;
}

void param(double *p, long n)
{
    for (long i = 0; i < n; i++)
        p[i] = (*__ompdsm_g_tx1) * (double)i;
}

void opaque(void);

void calls(long n)
{
    for (long i = 0; i < n; i++) {
        opaque();
        (*__ompdsm_g_d)[i] = 1.0;
    }
}

// SCOPES-LABEL: define{{.*}} void @kernel(
// SCOPES:       load double{{.*}}!alias.scope
// SCOPES:       [[LOOP:[0-9]+]]:{{.*}}preds = {{.*}}%[[LOOP]]
// SCOPES-NOT:   load double
// SCOPES:       store double{{.*}}!noalias
// SCOPES:       br i1 {{.*}}label %[[LOOP]]
// SCOPES-LABEL: define{{.*}} void @param(
// SCOPES:       [[PLOOP:[0-9]+]]:{{.*}}preds = {{.*}}%[[PLOOP]]
// SCOPES:       load double
// SCOPES:       store double
// SCOPES:       br i1 {{.*}}label %[[PLOOP]]
// SCOPES-LABEL: define{{.*}} void @calls(
// SCOPES:       load ptr, ptr @__ompdsm_g_d
// SCOPES:       call void @opaque
// SCOPES-NOT:   load ptr, ptr @__ompdsm_g_d
// SCOPES:       declare{{.*}} @opaque(

// NOSCOPES-LABEL: define{{.*}} void @kernel(
// NOSCOPES-NOT:   !alias.scope
// NOSCOPES:       [[LOOP:[0-9]+]]:{{.*}}preds = {{.*}}%[[LOOP]]
// NOSCOPES:       load double
// NOSCOPES:       store double
// NOSCOPES:       br i1 {{.*}}label %[[LOOP]]
// NOSCOPES-LABEL: define{{.*}} void @calls(
// NOSCOPES-NOT:   load ptr, ptr @__ompdsm_g_d
// NOSCOPES:       call void @opaque
// NOSCOPES:       load ptr, ptr @__ompdsm_g_d
