// globalias.cpp - part of ompdsm-wd.so: tells LLVM's alias analysis that
// two different shared globals never overlap.
//
// ompcc rewrites a shared global `double tx1` into a pointer to its place
// in the shared heap, `double *__ompdsm_g_tx1`, and every use into
// `(*__ompdsm_g_tx1)` (function statics: `__ompdsm_s_<function>_<name>`).
// Native code stores into `d[j][i][0][0]` and reads `tx1`, two objects the
// compiler knows are distinct; after the rewrite both are doubles reached
// through pointers, so every store to `d` may change `tx1` and the loop
// reloads each global scalar after each store.  NPB LU's jacld and jacu
// (a hundred stores, a hundred reads of dt, tx1, ty1, tz1 ... each) took
// 1.8-2x the cpu-clock samples of clang -fopenmp's on one node, and hoisting
// those reads by hand took LU W from 3.16 to 2.95 s (clang: 2.6 s).
//
// Each global is its own allocation (dsm_global_alloc), so accesses based
// on the value loaded from two different such pointers never overlap.
// At the start of the pipeline (before any simplification, where each use
// still loads the pointer from its global), each load and store whose
// address is based on a load of one of these pointers (through GEPs and
// casts: llvm::getUnderlyingObject) gets a scope of its own in one domain
// per module (!alias.scope) and says it does not alias any other such
// global's scope (!noalias); LLVM's scoped-noalias analysis then lets
// LICM and GVN keep `tx1` in a register across the stores to `d`.
// Anything else (a pointer stored in a shared global, a parameter, a
// pointer the program computed and kept in a variable) gets no tag and
// is treated as before.  Volatile and atomic accesses are left alone.
#include "wdpass.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Support/CommandLine.h"

using namespace llvm;

namespace ompdsm_wd {

static cl::opt<bool> Scopes("ompdsm-global-scopes", cl::init(true),
    cl::desc("ompdsm: tell alias analysis that distinct shared globals do not overlap"));

static bool sharedPointer(const GlobalVariable *G)
{
  StringRef N = G->getName();
  return (N.starts_with("__ompdsm_g_") || N.starts_with("__ompdsm_s_")) &&
         G->getValueType()->isPointerTy();
}

// The shared global whose storage the access at Ptr lies in, or null.
static const GlobalVariable *baseGlobal(const Value *Ptr)
{
  const auto *L = dyn_cast<LoadInst>(getUnderlyingObject(Ptr, 12));
  if (!L || L->isVolatile() || L->isAtomic())
    return nullptr;
  const auto *G = dyn_cast<GlobalVariable>(L->getPointerOperand()->stripPointerCasts());
  return G && sharedPointer(G) ? G : nullptr;
}

// The pointers themselves never change once the program runs: the
// runtime sets each before main (OMPDSM_register_unit, from the unit's
// constructor), the same address on every node, and no code of the
// program stores to one (it cannot name them).  Their loads are marked
// !invariant.load, so that where registers run short (NPB LU's jacld and
// jacu read some forty globals in one loop body) the register allocator
// reloads a pointer from its global instead of spilling it to the stack
// and reloading it from there, and LICM may hoist it over calls.
static bool loadsSharedPointer(const LoadInst *L)
{
  const auto *G = dyn_cast<GlobalVariable>(L->getPointerOperand()->stripPointerCasts());
  return G && sharedPointer(G);
}

PreservedAnalyses GlobalScopes::run(Module &M, ModuleAnalysisManager &)
{
  if (!Scopes)
    return PreservedAnalyses::all();
  SmallVector<const GlobalVariable *, 64> Gs;
  for (const GlobalVariable &G : M.globals())
    if (sharedPointer(&G))
      Gs.push_back(&G);
  if (Gs.empty())
    return PreservedAnalyses::all();
  // Scopes only where two globals can be told apart.
  bool Scoped = Gs.size() >= 2;
  MDBuilder MDB(M.getContext());
  MDNode *Invariant = MDNode::get(M.getContext(), {});
  DenseMap<const GlobalVariable *, unsigned> Index;
  SmallVector<Metadata *, 64> Scope;
  if (Scoped) {
    MDNode *Dom = MDB.createAnonymousAliasScopeDomain("ompdsm shared globals");
    for (const GlobalVariable *G : Gs) {
      Index[G] = Scope.size();
      Scope.push_back(MDB.createAnonymousAliasScope(Dom, G->getName()));
    }
  }
  // Per global, made when first used: its scope list and the list of all
  // the others' scopes.
  SmallVector<MDNode *, 64> Own(Gs.size(), nullptr), Others(Gs.size(), nullptr);
  unsigned Tagged = 0;
  for (Function &F : M) {
    for (Instruction &I : instructions(F)) {
      const Value *Ptr = nullptr;
      if (auto *L = dyn_cast<LoadInst>(&I)) {
        if (L->isVolatile() || L->isAtomic())
          continue;
        if (loadsSharedPointer(L)) {
          L->setMetadata(LLVMContext::MD_invariant_load, Invariant);
          Tagged++;
          continue;
        }
        Ptr = L->getPointerOperand();
      } else if (auto *S = dyn_cast<StoreInst>(&I)) {
        if (S->isVolatile() || S->isAtomic())
          continue;
        Ptr = S->getPointerOperand();
      } else {
        continue;
      }
      const GlobalVariable *G = Scoped ? baseGlobal(Ptr) : nullptr;
      if (!G)
        continue;
      unsigned K = Index.lookup(G);
      if (!Own[K]) {
        Own[K] = MDNode::get(M.getContext(), Scope[K]);
        SmallVector<Metadata *, 64> O;
        for (unsigned J = 0; J < Scope.size(); J++)
          if (J != K)
            O.push_back(Scope[J]);
        Others[K] = MDNode::get(M.getContext(), O);
      }
      I.setMetadata(LLVMContext::MD_alias_scope,
                    MDNode::concatenate(I.getMetadata(LLVMContext::MD_alias_scope), Own[K]));
      I.setMetadata(LLVMContext::MD_noalias,
                    MDNode::concatenate(I.getMetadata(LLVMContext::MD_noalias), Others[K]));
      Tagged++;
    }
  }
  return Tagged ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace ompdsm_wd
