// wdpass.h - the parts of ompcc's write-detection pass (ompdsm-wd.so) that
// its two files share: the runtime's symbols as one module declares them,
// the values a function loads from them at entry, the marks emitted after a
// store, and the loop optimisation's entry point (wdloops.cpp).
// What the pass does and its contract with libompdsm: docs/ompcc.md,
// "Write detection".
#ifndef OMPDSM_WDPASS_H
#define OMPDSM_WDPASS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"

namespace ompdsm_wd {

// What the pass did to one module, for -mllvm -ompdsm-wd-report.
struct Counts {
  unsigned StoresInline = 0;   // plain stores marked by an inline shadow store
  unsigned StoresCall = 0;     // plain stores that call OMPDSM_wd_mark
  unsigned Atomics = 0;        // atomicrmw and cmpxchg
  unsigned MemIntrinsics = 0;  // llvm.memset/memcpy/memmove
  unsigned Masked = 0;         // masked stores, scatters, compress stores
  unsigned Guards = 0;         // calls to external functions guarded
  unsigned Intrinsics = 0;     // target intrinsics that write: guarded
  unsigned LoopMarks = 0;      // ranges marked around a loop (wdloops.cpp)
  unsigned LoopStrided = 0;    // of them, strided ranges (OMPDSM_wd_mark_strided)
  unsigned LoopStores = 0;     // stores whose per-iteration mark they replace
  unsigned Skipped = 0;        // stores to the stack or to globals
  unsigned Plain = 0;          // functions given a plain copy (write detection off)
};

// The runtime's globals and functions, declared extern_weak in the module
// so that a program still links and runs with a libompdsm without them.
struct Runtime {
  llvm::GlobalVariable *Base, *Size, *Shadow, *Pages, *Shift;
  // private constant zeros, read instead of a global whose address is null
  llvm::GlobalVariable *Zero;
  llvm::FunctionCallee Mark, MarkStrided, Guard, Unguard, Register;
  llvm::Type *I64, *I32, *I8, *Ptr;
};

// The globals' values in one function, loaded once in its entry block.
struct Entry {
  llvm::Value *Base, *Size, *Shadow, *Pages, *Shift;
};

// Emits at B's insertion point (which must be followed by an instruction
// of its block) "if p is in the heap, mark len bytes at p": inline stores
// of 0x0F into the shadow map when len is a constant multiple of 4 up to
// 64 at an alignment of 4 or more, else a call to OMPDSM_wd_mark.  A constant
// length also sets the page's byte (OMPDSM_wd_mark does it for the others).
// Cond, when given, must also hold (it is tested first).  B is left after
// the marks.
void emitMark(llvm::IRBuilder<> &B, const Runtime &R, const Entry &E,
              llvm::Value *P, llvm::Value *Len, llvm::Align A,
              llvm::Value *Cond, Counts &C, bool CountAsStore);

// Emits at B's insertion point "if [p, p + Span) meets the heap, mark
// Count blocks of Width bytes at p, p + Stride, ...": a call to
// OMPDSM_wd_mark_strided (the strided stores of a loop, wdloops.cpp).  Cond
// as for emitMark.
void emitStridedMark(llvm::IRBuilder<> &B, const Runtime &R, const Entry &E,
                     llvm::Value *P, llvm::Value *Span, uint64_t Width,
                     uint64_t Stride, llvm::Value *Count, llvm::Value *Cond);

// The loop optimisation: finds among Stores (plain stores that need marks)
// those of F's loops whose marks one call after the loop can replace,
// emits those calls and adds the stores to Done, mapped to null (no mark
// of their own) or to an i1 that must hold for their own marks (the
// assumptions of the mark after the loop do not).
void markLoops(llvm::Function &F, llvm::FunctionAnalysisManager &FAM,
               const Runtime &R, const Entry &E,
               llvm::ArrayRef<llvm::StoreInst *> Stores,
               llvm::DenseMap<llvm::Instruction *, llvm::Value *> &Done,
               Counts &C);

// Scopes that tell alias analysis two different shared globals never
// overlap (globalias.cpp); runs at the pipeline's start.
struct GlobalScopes : llvm::PassInfoMixin<GlobalScopes> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

} // namespace ompdsm_wd

#endif
