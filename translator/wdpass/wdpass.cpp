// wdpass.cpp - ompdsm-wd.so, the LLVM pass plugin ompcc's clang backend
// loads (-fpass-plugin=) for software write detection: around every store,
// atomic, memory intrinsic and masked store that may reach the shared heap
// it marks the stored bytes in libompdsm's shadow map; around calls to
// functions compiled without it, it calls the runtime's guard; each module
// gets a constructor that registers its functions with the runtime.  The
// loop optimisation (one mark before and one after a loop) is wdloops.cpp.  C++ because
// LLVM's pass API is C++ only.  What the code looks like after the pass,
// and the contract with libompdsm: docs/ompcc.md, "Write detection".
#include "wdpass.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace llvm;

namespace ompdsm_wd {

// Options: with -fpass-plugin alone clang parses -mllvm before it loads
// the plugin, so they need the plugin loaded early too (-fplugin=).
static cl::opt<bool> LoopOpt("ompdsm-wd-loops", cl::init(true),
    cl::desc("ompdsm-wd: one mark before and after a loop for its contiguous stores"));
static cl::opt<bool> Plain("ompdsm-wd-plain", cl::init(true),
    cl::desc("ompdsm-wd: a plain copy of each function with a loop (or many marks), run while write detection is off"));
static cl::opt<unsigned> PlainMin("ompdsm-wd-plain-min", cl::init(8),
    cl::desc("ompdsm-wd: a function without a loop gets a plain copy from this many marks and guards"));
static cl::opt<bool> Report("ompdsm-wd-report", cl::init(false),
    cl::desc("ompdsm-wd: print per module what the pass instrumented"));

// 2: OMPDSM_wd_mark_strided (a libompdsm of ABI 1 lacks it, and refuses
// the module at its registration instead of missing marks)
static const unsigned AbiVersion = 2;
static const char RegisterName[] = "__ompdsm_wd_register";

// ---------------------------------------------------------------------------
// The runtime's symbols
// ---------------------------------------------------------------------------

static GlobalVariable *weakGlobal(Module &M, StringRef Name, Type *T)
{
  GlobalVariable *G = M.getGlobalVariable(Name, true);
  if (!G)
    return new GlobalVariable(M, T, false, GlobalValue::ExternalWeakLinkage,
                              nullptr, Name);
  if (G->isDeclaration())
    G->setLinkage(GlobalValue::ExternalWeakLinkage);
  return G;
}

static FunctionCallee weakFunction(Module &M, StringRef Name, FunctionType *T)
{
  FunctionCallee C = M.getOrInsertFunction(Name, T);
  if (auto *F = dyn_cast<Function>(C.getCallee()))
    if (F->isDeclaration())
      F->setLinkage(GlobalValue::ExternalWeakLinkage);
  return C;
}

static Runtime declareRuntime(Module &M)
{
  LLVMContext &Ctx = M.getContext();
  Runtime R;
  R.I64 = Type::getInt64Ty(Ctx);
  R.I32 = Type::getInt32Ty(Ctx);
  R.I8 = Type::getInt8Ty(Ctx);
  R.Ptr = PointerType::get(Ctx, 0);
  R.Base = weakGlobal(M, "OMPDSM_wd_base", R.I64);
  R.Size = weakGlobal(M, "OMPDSM_wd_size", R.I64);
  R.Shadow = weakGlobal(M, "OMPDSM_wd_shadow", R.Ptr);
  R.Pages = weakGlobal(M, "OMPDSM_wd_pages", R.Ptr);
  R.Shift = weakGlobal(M, "OMPDSM_wd_page_shift", R.I32);
  R.Zero = new GlobalVariable(M, R.I64, true, GlobalValue::PrivateLinkage,
                              ConstantInt::get(R.I64, 0), "__ompdsm_wd_zero");
  R.Zero->setAlignment(Align(8));
  Type *Void = Type::getVoidTy(Ctx);
  R.Mark = weakFunction(M, "OMPDSM_wd_mark",
                        FunctionType::get(Void, {R.Ptr, R.I64}, false));
  R.MarkStrided = weakFunction(M, "OMPDSM_wd_mark_strided",
                               FunctionType::get(Void, {R.Ptr, R.I64, R.I64, R.I64}, false));
  R.Guard = weakFunction(M, "OMPDSM_wd_guard",
                         FunctionType::get(R.I64, {R.Ptr, R.I32}, true));
  R.Unguard = weakFunction(M, "OMPDSM_wd_unguard",
                           FunctionType::get(Void, {R.I64}, false));
  R.Register = weakFunction(M, "OMPDSM_wd_register",
                            FunctionType::get(Void, {R.I32, R.Ptr, R.I32}, false));
  return R;
}

// The five globals come from one version of libompdsm: when its size is
// absent (an older library), all are, and every load reads the private
// zero instead.  Size 0 then turns every mark and guard off.
static Entry loadEntry(Function &F, const Runtime &R)
{
  BasicBlock &EB = F.getEntryBlock();
  BasicBlock::iterator IP = EB.getFirstInsertionPt();
  while (isa<AllocaInst>(*IP))
    ++IP;
  IRBuilder<> B(&EB, IP);
  Value *Absent = B.CreateIsNull(R.Size, "wd.absent");
  auto load = [&](GlobalVariable *G, Type *T, const char *Name) {
    return B.CreateLoad(T, B.CreateSelect(Absent, R.Zero, G), Name);
  };
  Entry E;
  E.Base = load(R.Base, R.I64, "wd.base");
  E.Size = load(R.Size, R.I64, "wd.size");
  E.Shadow = load(R.Shadow, R.Ptr, "wd.shadow");
  E.Pages = load(R.Pages, R.Ptr, "wd.pages");
  E.Shift = B.CreateZExt(load(R.Shift, R.I32, "wd.shift32"), R.I64, "wd.shift");
  return E;
}

// ---------------------------------------------------------------------------
// Marks
// ---------------------------------------------------------------------------

// Whole shadow bytes, few enough to store inline: a constant trip count's
// mark after a loop (BT's five components) is as cheap as a store's.
static bool inlineWidth(uint64_t W)
{
  return W && W % 4 == 0 && W <= 64;
}

void emitMark(IRBuilder<> &B, const Runtime &R, const Entry &E, Value *P,
              Value *Len, Align A, Value *Cond, Counts &C, bool CountAsStore)
{
  BasicBlock::iterator IP = B.GetInsertPoint();
  // Cond first: in a loop it is usually invariant, one predicted branch
  if (Cond)
    B.SetInsertPoint(SplitBlockAndInsertIfThen(Cond, IP, false));
  Value *D = B.CreateSub(B.CreatePtrToInt(P, R.I64), E.Base, "wd.d");
  Value *In = B.CreateICmpULT(D, E.Size, "wd.in");
  auto *CLen = dyn_cast<ConstantInt>(Len);
  if (!CLen) // a range may start below the heap and reach into it
    In = B.CreateOr(In, B.CreateAnd(B.CreateIsNotNull(E.Size),
                                    B.CreateICmpULT(B.CreateNeg(D), Len)));
  Instruction *Then = SplitBlockAndInsertIfThen(In, B.GetInsertPoint(), false);
  B.SetInsertPoint(Then);
  uint64_t W = CLen ? CLen->getZExtValue() : 0;
  if (CLen && inlineWidth(W) && A.value() >= 4) {
    Value *Sh = B.CreateGEP(R.I8, E.Shadow, B.CreateLShr(D, 2), "wd.sh");
    if (isPowerOf2_64(W)) {
      unsigned Bits = unsigned(W / 4 * 8);
      B.CreateAlignedStore(
          ConstantInt::get(B.getIntNTy(Bits), APInt::getSplat(Bits, APInt(8, 0x0F))),
          Sh, Align(1));
    } else { // a few stores, as codegen expands a small memset
      B.CreateMemSet(Sh, B.getInt8(0x0F), W / 4, Align(1));
    }
    if (CountAsStore)
      C.StoresInline++;
  } else {
    B.CreateCall(R.Mark, {P, Len});
    if (CountAsStore)
      C.StoresCall++;
  }
  if (CLen && W) {
    // A store aligned to less than its width may end on the next page.
    Value *Pg = B.CreateGEP(R.I8, E.Pages, B.CreateLShr(D, E.Shift), "wd.pg");
    B.CreateStore(B.getInt8(1), Pg);
    if (A.value() < W) {
      Value *Last = B.CreateAdd(D, ConstantInt::get(R.I64, W - 1));
      B.CreateStore(B.getInt8(1),
                    B.CreateGEP(R.I8, E.Pages, B.CreateLShr(Last, E.Shift)));
    }
  }
  B.SetInsertPoint(IP->getParent(), IP);
}

void emitStridedMark(IRBuilder<> &B, const Runtime &R, const Entry &E, Value *P,
                     Value *Span, uint64_t Width, uint64_t Stride, Value *Count,
                     Value *Cond)
{
  BasicBlock::iterator IP = B.GetInsertPoint();
  if (Cond)
    B.SetInsertPoint(SplitBlockAndInsertIfThen(Cond, IP, false));
  Value *D = B.CreateSub(B.CreatePtrToInt(P, R.I64), E.Base, "wd.d");
  // (the blocks may start below the heap and reach into it)
  Value *In = B.CreateOr(B.CreateICmpULT(D, E.Size, "wd.in"),
                         B.CreateAnd(B.CreateIsNotNull(E.Size),
                                     B.CreateICmpULT(B.CreateNeg(D), Span)));
  B.SetInsertPoint(SplitBlockAndInsertIfThen(In, B.GetInsertPoint(), false));
  B.CreateCall(R.MarkStrided, {P, ConstantInt::get(R.I64, Width),
                               ConstantInt::get(R.I64, Stride), Count});
  B.SetInsertPoint(IP->getParent(), IP);
}

// Marks ESz bytes at LanePtr(i) for every bit i set in the i64 M.
static void emitLanes(IRBuilder<> &B, const Runtime &R, const Entry &E,
                      Value *M, function_ref<Value *(IRBuilder<> &, Value *)> LanePtr,
                      uint64_t ESz, Align LA, Counts &C)
{
  BasicBlock::iterator IP = B.GetInsertPoint();
  BasicBlock *Pre = IP->getParent();
  Function *F = Pre->getParent();
  BasicBlock *Exit = Pre->splitBasicBlock(IP, "wd.lanes.done");
  BasicBlock *Body = BasicBlock::Create(F->getContext(), "wd.lanes", F, Exit);
  Pre->getTerminator()->eraseFromParent();
  B.SetInsertPoint(Pre);
  B.CreateCondBr(B.CreateIsNotNull(M), Body, Exit);
  B.SetInsertPoint(Body);
  PHINode *Bits = B.CreatePHI(R.I64, 2, "wd.lanes.m");
  Bits->addIncoming(M, Pre);
  Value *Idx = B.CreateIntrinsic(Intrinsic::cttz, {R.I64}, {Bits, B.getTrue()});
  Value *P = LanePtr(B, Idx);
  Instruction *Term = B.CreateUnreachable();
  B.SetInsertPoint(Term);
  emitMark(B, R, E, P, ConstantInt::get(R.I64, ESz), LA, nullptr, C, false);
  Value *Next = B.CreateAnd(Bits, B.CreateSub(Bits, ConstantInt::get(R.I64, 1)));
  BasicBlock *Latch = B.GetInsertBlock();
  B.CreateCondBr(B.CreateIsNotNull(Next), Body, Exit);
  Term->eraseFromParent();
  Bits->addIncoming(Next, Latch);
  B.SetInsertPoint(Exit, IP);
}

// A masked store of vector type VT at P (or, with Ptrs, a scatter to the
// vector of pointers Ptrs) with the <N x i1> Mask: the enabled lanes one
// by one, a contiguous store with every lane enabled as one mark.
static void markMasked(IRBuilder<> &B, const Runtime &R, const Entry &E,
                       const DataLayout &DL, FixedVectorType *VT, Value *P,
                       Value *Ptrs, Value *Mask, Align A, Counts &C)
{
  Type *ET = VT->getElementType();
  unsigned N = VT->getNumElements();
  uint64_t ESz = DL.getTypeStoreSize(ET);
  Align LA = commonAlignment(A, ESz);
  if (!Ptrs && (DL.getTypeSizeInBits(ET) != ESz * 8 ||
                (isa<Constant>(Mask) && cast<Constant>(Mask)->isAllOnesValue()))) {
    // all lanes on, or lanes that are not whole bytes: the whole vector
    emitMark(B, R, E, P, ConstantInt::get(R.I64, DL.getTypeStoreSize(VT)), A,
             nullptr, C, false);
    return;
  }
  Value *MInt = B.CreateBitCast(Mask, B.getIntNTy(N));
  if (!Ptrs) {
    Value *All = B.CreateICmpEQ(MInt, Constant::getAllOnesValue(MInt->getType()));
    emitMark(B, R, E, P, ConstantInt::get(R.I64, N * ESz), A, All, C, false);
    MInt = B.CreateSelect(All, Constant::getNullValue(MInt->getType()), MInt);
  }
  for (unsigned First = 0; First < N; First += 64) {
    Value *Chunk = MInt;
    if (First)
      Chunk = B.CreateLShr(Chunk, First);
    Chunk = B.CreateZExtOrTrunc(Chunk, R.I64);
    emitLanes(B, R, E, Chunk, [&](IRBuilder<> &LB, Value *Idx) -> Value * {
      Value *I = First ? LB.CreateAdd(Idx, ConstantInt::get(R.I64, First)) : Idx;
      if (Ptrs)
        return LB.CreateExtractElement(Ptrs, I);
      return LB.CreateGEP(ET, P, I);
    }, ESz, LA, C);
  }
}

// ---------------------------------------------------------------------------
// What to instrument
// ---------------------------------------------------------------------------

enum Kind { KStore, KRMW, KCmpXchg, KMem, KMasked, KScatter, KCompress,
            KX86Mask, KIntrinsic, KCall };

struct Item {
  Instruction *I;
  Kind K;
};

// Whether every object P may point into is on the stack or a global: the
// shared heap is reached through pointers that are loaded (ompcc's shared
// globals through their slots) or returned by the runtime.
static bool privateObject(const Value *P)
{
  if (P->getType()->isPointerTy() && P->getType()->getPointerAddressSpace() != 0)
    return true; // not the heap's address space (x86's __seg_fs, __seg_gs)
  SmallVector<const Value *, 4> Objs;
  getUnderlyingObjects(P, Objs, nullptr, 0);
  for (const Value *O : Objs)
    if (!isa<AllocaInst>(O) && !isa<GlobalVariable>(O))
      return false;
  return !Objs.empty();
}

static bool anySharedPointer(const CallBase &CB)
{
  for (const Value *A : CB.args())
    if (A->getType()->isPointerTy() && !privateObject(A))
      return true;
  return false;
}

// A call to a function only declared here that is not the runtime's and
// may write memory through a pointer argument that may be in the heap.
static Function *guardedCallee(CallBase &CB)
{
  auto *F = dyn_cast<Function>(CB.getCalledOperand()->stripPointerCasts());
  if (!F || !F->isDeclaration() || F->isIntrinsic())
    return nullptr;
  StringRef N = F->getName();
  if (N.starts_with("OMPDSM_") || N.starts_with("omp_") || N.starts_with("__ompdsm_"))
    return nullptr;
  MemoryEffects ME = CB.getMemoryEffects();
  if (ME.onlyReadsMemory() || ME.onlyAccessesInaccessibleMem())
    return nullptr;
  // code after them would never run (noreturn), or must not be added
  // (musttail, returns_twice)
  if (CB.doesNotReturn() || CB.isMustTailCall() || CB.hasFnAttr(Attribute::ReturnsTwice))
    return nullptr;
  return anySharedPointer(CB) ? F : nullptr;
}

static bool isX86MaskStore(Intrinsic::ID ID)
{
  switch (ID) {
  case Intrinsic::x86_avx_maskstore_pd: case Intrinsic::x86_avx_maskstore_pd_256:
  case Intrinsic::x86_avx_maskstore_ps: case Intrinsic::x86_avx_maskstore_ps_256:
  case Intrinsic::x86_avx2_maskstore_d: case Intrinsic::x86_avx2_maskstore_d_256:
  case Intrinsic::x86_avx2_maskstore_q: case Intrinsic::x86_avx2_maskstore_q_256:
    return true;
  default:
    return false;
  }
}

static void collect(Function &F, SmallVectorImpl<Item> &Items, Counts &C)
{
  auto add = [&](Instruction &I, Kind K, const Value *P) {
    if (P && privateObject(P))
      C.Skipped++;
    else
      Items.push_back({&I, K});
  };
  for (BasicBlock &BB : F) {
    for (Instruction &I : BB) {
      if (auto *S = dyn_cast<StoreInst>(&I)) {
        add(I, KStore, S->getPointerOperand());
      } else if (auto *A = dyn_cast<AtomicRMWInst>(&I)) {
        add(I, KRMW, A->getPointerOperand());
      } else if (auto *X = dyn_cast<AtomicCmpXchgInst>(&I)) {
        add(I, KCmpXchg, X->getPointerOperand());
      } else if (auto *MI = dyn_cast<AnyMemIntrinsic>(&I)) {
        add(I, KMem, MI->getRawDest());
      } else if (auto *II = dyn_cast<IntrinsicInst>(&I)) {
        Intrinsic::ID ID = II->getIntrinsicID();
        if (ID == Intrinsic::masked_store)
          add(I, KMasked, II->getArgOperand(1));
        else if (ID == Intrinsic::masked_scatter)
          add(I, KScatter, nullptr);
        else if (ID == Intrinsic::masked_compressstore)
          add(I, KCompress, II->getArgOperand(1));
        else if (isX86MaskStore(ID))
          add(I, KX86Mask, II->getArgOperand(0));
        else if (Function::isTargetIntrinsic(ID) && !II->onlyReadsMemory() &&
                 !II->getMemoryEffects().onlyAccessesInaccessibleMem() &&
                 anySharedPointer(*II))
          add(I, KIntrinsic, nullptr); // x86 scatters, maskmovdqu, ...
      } else if (auto *CB = dyn_cast<CallBase>(&I)) {
        if (!isa<CallBrInst>(CB) && guardedCallee(*CB))
          add(I, KCall, nullptr);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Guards around calls
// ---------------------------------------------------------------------------

// tok = size ? OMPDSM_wd_guard(callee, n, ptrs...) : 0 before CB, and
// OMPDSM_wd_unguard(tok) when tok != 0 after it, on both edges of an invoke.
static void emitGuard(CallBase *CB, Value *Callee, const Runtime &R,
                      const Entry &E)
{
  SmallVector<Value *, 8> Args = {Callee, nullptr};
  for (Value *A : CB->args())
    if (A->getType()->isPointerTy() && A->getType()->getPointerAddressSpace() == 0)
      Args.push_back(A);
  IRBuilder<> B(CB);
  Args[1] = B.getInt32(unsigned(Args.size() - 2));
  BasicBlock *Head = CB->getParent();
  Instruction *Then = SplitBlockAndInsertIfThen(B.CreateIsNotNull(E.Size), CB, false);
  B.SetInsertPoint(Then);
  CallInst *T = B.CreateCall(R.Guard, Args, "wd.tok");
  B.SetInsertPoint(CB);
  PHINode *Tok = B.CreatePHI(R.I64, 2, "wd.tok");
  Tok->addIncoming(T, Then->getParent());
  Tok->addIncoming(ConstantInt::get(R.I64, 0), Head);
  auto unguardAt = [&](BasicBlock::iterator IP) {
    IRBuilder<> U(IP->getParent(), IP);
    U.SetCurrentDebugLocation(CB->getDebugLoc());
    Instruction *T2 = SplitBlockAndInsertIfThen(U.CreateIsNotNull(Tok), IP, false);
    U.SetInsertPoint(T2);
    U.CreateCall(R.Unguard, {Tok});
  };
  if (auto *Inv = dyn_cast<InvokeInst>(CB)) {
    BasicBlock *Normal = Inv->getNormalDest(), *Unwind = Inv->getUnwindDest();
    if (!Normal->getSinglePredecessor())
      Normal = SplitEdge(Inv->getParent(), Normal);
    if (Unwind->isLandingPad() && !Unwind->getSinglePredecessor()) {
      SmallVector<BasicBlock *, 2> New;
      SplitLandingPadPredecessors(Unwind, {Inv->getParent()}, ".wd", ".wd.other", New);
      Unwind = New[0];
    }
    unguardAt(Normal->getFirstInsertionPt());
    if (Unwind->isLandingPad())
      unguardAt(Unwind->getFirstInsertionPt());
  } else {
    unguardAt(std::next(CB->getIterator()));
  }
}

// ---------------------------------------------------------------------------
// One function
// ---------------------------------------------------------------------------

// Cond, when not null: an i1 that must also hold (plain stores only).
static void instrumentAt(Item &It, const Runtime &R, const Entry &E,
                         const DataLayout &DL, Value *Cond, Counts &C, bool Before);

// Marks go after the instruction and, for every kind but a compare-
// exchange (which may store nothing), also before it: the runtime clears a
// mark before it reads the data, so the mark after is never lost to a
// concurrent release; a thread that write-protects a page and then reads
// its marks (an acquire making stale a page another thread of the node
// writes) finds, by the mark before, every store already in memory.
static void instrument(Item &It, const Runtime &R, const Entry &E,
                       const DataLayout &DL, Value *Cond, Counts &C)
{
  instrumentAt(It, R, E, DL, Cond, C, false);
  switch (It.K) {
  case KStore: case KRMW: case KMem: case KMasked: case KScatter:
  case KX86Mask: case KCompress:
    instrumentAt(It, R, E, DL, Cond, C, true);
    break;
  default:
    break;
  }
}

static void instrumentAt(Item &It, const Runtime &R, const Entry &E,
                         const DataLayout &DL, Value *Cond, Counts &C, bool Before)
{
  Instruction *I = It.I;
  IRBuilder<> B(I->getParent(), Before ? I->getIterator() : std::next(I->getIterator()));
  Counts Ignored;
  Counts &Cnt = Before ? Ignored : C; // (counted once)
  B.SetCurrentDebugLocation(I->getDebugLoc());
  auto size = [&](Type *T) -> Value * {
    return B.CreateTypeSize(R.I64, DL.getTypeStoreSize(T));
  };
  switch (It.K) {
  case KStore: {
    auto *S = cast<StoreInst>(I);
    emitMark(B, R, E, S->getPointerOperand(), size(S->getValueOperand()->getType()),
             S->getAlign(), Cond, Cnt, true);
    break;
  }
  case KRMW: {
    auto *A = cast<AtomicRMWInst>(I);
    emitMark(B, R, E, A->getPointerOperand(), size(A->getValOperand()->getType()),
             A->getAlign(), nullptr, Cnt, false);
    Cnt.Atomics++;
    break;
  }
  case KCmpXchg: { // a failed exchange stored nothing
    auto *X = cast<AtomicCmpXchgInst>(I);
    emitMark(B, R, E, X->getPointerOperand(), size(X->getNewValOperand()->getType()),
             X->getAlign(), B.CreateExtractValue(X, 1), Cnt, false);
    Cnt.Atomics++;
    break;
  }
  case KMem: {
    auto *MI = cast<AnyMemIntrinsic>(I);
    emitMark(B, R, E, MI->getRawDest(), B.CreateZExtOrTrunc(MI->getLength(), R.I64),
             MI->getDestAlign().valueOrOne(), nullptr, Cnt, false);
    Cnt.MemIntrinsics++;
    break;
  }
  case KMasked: case KScatter: case KX86Mask: {
    auto *II = cast<IntrinsicInst>(I);
    Value *Val, *P = nullptr, *Ptrs = nullptr, *Mask;
    Align A(1);
    if (It.K == KX86Mask) { // (ptr, <N x iK> mask: the sign bits, value)
      P = II->getArgOperand(0);
      Mask = II->getArgOperand(1);
      Mask = B.CreateICmpSLT(Mask, Constant::getNullValue(Mask->getType()));
      Val = II->getArgOperand(2);
    } else { // (value, ptr or <N x ptr>, align, <N x i1> mask)
      Val = II->getArgOperand(0);
      (It.K == KMasked ? P : Ptrs) = II->getArgOperand(1);
      A = Align(cast<ConstantInt>(II->getArgOperand(2))->getZExtValue());
      Mask = II->getArgOperand(3);
    }
    markMasked(B, R, E, DL, cast<FixedVectorType>(Val->getType()), P, Ptrs, Mask, A, Cnt);
    Cnt.Masked++;
    break;
  }
  case KCompress: { // the enabled lanes, packed at ptr
    auto *II = cast<IntrinsicInst>(I);
    auto *VT = cast<FixedVectorType>(II->getArgOperand(0)->getType());
    Value *MInt = B.CreateBitCast(II->getArgOperand(2), B.getIntNTy(VT->getNumElements()));
    Value *Lanes = B.CreateZExtOrTrunc(B.CreateUnaryIntrinsic(Intrinsic::ctpop, MInt), R.I64);
    Value *Len = B.CreateMul(Lanes, size(VT->getElementType()));
    emitMark(B, R, E, II->getArgOperand(1), Len, Align(1), nullptr, Cnt, false);
    Cnt.Masked++;
    break;
  }
  case KIntrinsic: // no callee to name: the runtime treats it as unknown code
    emitGuard(cast<CallBase>(I), ConstantPointerNull::get(cast<PointerType>(R.Ptr)), R, E);
    Cnt.Intrinsics++;
    break;
  case KCall:
    emitGuard(cast<CallBase>(I), guardedCallee(*cast<CallBase>(I)), R, E);
    Cnt.Guards++;
    break;
  }
}

// A function with a loop and marks gets a plain copy, made before the
// marks go in, which its entry calls while write detection is off (the
// runtime's size is 0: one node, page protection, an older library): the
// checks of a mark cost one node 20-40% of SNU-style IS's ranking loop,
// where a store's check sits between a load and the store that depends on
// it.  The copy is internal and never registered: with write detection
// off nothing needs a mark or a guard.  (Not for functions taking
// variable arguments, which a call cannot pass on, nor at -O0.)
// A function without a loop gets one too when it holds PlainMin marks and
// guards or more: NPB BT's binvcrhs, 100-odd stores through its pointer
// arguments with divisions between them and no loop, took 4 times the
// samples of clang's on one node with a check at every store (each store a
// block of its own, nothing scheduled across them); a function of a few
// stores would pay its entry's check for as much as it saves.
static Function *plainCopy(Function &F, FunctionAnalysisManager &FAM, size_t NItems)
{
  if (!Plain || F.isVarArg() || F.hasOptNone() || F.hasFnAttribute(Attribute::Naked))
    return nullptr;
  LoopInfo &LI = FAM.getResult<LoopAnalysis>(F);
  if (LI.empty() && NItems < PlainMin)
    return nullptr;
  ValueToValueMapTy VMap;
  Function *P = CloneFunction(&F, VMap);
  P->setName(F.getName() + ".ompdsm_plain");
  P->setLinkage(GlobalValue::InternalLinkage);
  P->setVisibility(GlobalValue::DefaultVisibility);
  P->setDLLStorageClass(GlobalValue::DefaultStorageClass);
  P->setComdat(nullptr);
  P->removeFnAttr(Attribute::AlwaysInline);
  // (its debug name is its own: gdb takes two functions of one name for
  // one, and a breakpoint on a line would stop in one copy only)
  if (DISubprogram *SP = P->getSubprogram())
    SP->replaceLinkageName(MDString::get(F.getContext(), P->getName()));
  return P;
}

// F's new entry block: its constant allocas, then, when the runtime's size
// is 0, a tail call of the plain copy with F's arguments and its return.
static void dispatchToPlain(Function &F, Function *P, const Runtime &R)
{
  LLVMContext &Ctx = F.getContext();
  BasicBlock *Old = &F.getEntryBlock();
  BasicBlock *Entry = BasicBlock::Create(Ctx, "wd.entry", &F, Old);
  BasicBlock *Call = BasicBlock::Create(Ctx, "wd.plain", &F, Old);
  SmallVector<AllocaInst *, 8> Allocas;
  for (Instruction &I : *Old)
    if (auto *A = dyn_cast<AllocaInst>(&I))
      if (isa<Constant>(A->getArraySize()))
        Allocas.push_back(A);
  for (AllocaInst *A : Allocas)
    A->moveBefore(*Entry, Entry->end());
  IRBuilder<> B(Entry);
  Value *Absent = B.CreateIsNull(R.Size, "wd.absent");
  Value *Size = B.CreateLoad(R.I64, B.CreateSelect(Absent, R.Zero, R.Size), "wd.on");
  B.CreateCondBr(B.CreateIsNull(Size), Call, Old);
  B.SetInsertPoint(Call);
  SmallVector<Value *, 8> Args;
  for (Argument &A : F.args())
    Args.push_back(&A);
  CallInst *CI = B.CreateCall(P, Args);
  if (DISubprogram *SP = F.getSubprogram()) // (an inlinable call needs a line)
    CI->setDebugLoc(DILocation::get(Ctx, SP->getLine(), 0, SP));
  CI->setTailCallKind(CallInst::TCK_Tail);
  CI->setCallingConv(F.getCallingConv());
  CI->setAttributes(F.getAttributes());
  if (F.getReturnType()->isVoidTy())
    B.CreateRetVoid();
  else
    B.CreateRet(CI);
}

static bool instrumentFunction(Function &F, FunctionAnalysisManager &FAM,
                               const Runtime &R, Counts &C)
{
  SmallVector<Item, 32> Items;
  collect(F, Items, C);
  if (Items.empty())
    return false;
  Function *P = plainCopy(F, FAM, Items.size());
  if (P)
    C.Plain++;
  Entry E = loadEntry(F, R);
  DenseMap<Instruction *, Value *> Done;
  if (LoopOpt && !F.hasOptNone()) {
    SmallVector<StoreInst *, 16> Stores;
    for (Item &It : Items)
      if (It.K == KStore)
        Stores.push_back(cast<StoreInst>(It.I));
    markLoops(F, FAM, R, E, Stores, Done, C);
  }
  const DataLayout &DL = F.getDataLayout();
  for (Item &It : Items) {
    auto D = Done.find(It.I);
    if (D == Done.end())
      instrument(It, R, E, DL, nullptr, C);
    else if (D->second)
      instrument(It, R, E, DL, D->second, C);
  }
  if (P)
    dispatchToPlain(F, P, R);
  return true;
}

// ---------------------------------------------------------------------------
// The module
// ---------------------------------------------------------------------------

// A constructor: OMPDSM_wd_register(1, {every function defined here}, n),
// when the runtime has it.
static void addRegistration(Module &M, const Runtime &R, ArrayRef<Function *> Fns)
{
  LLVMContext &Ctx = M.getContext();
  Constant *List = ConstantPointerNull::get(cast<PointerType>(R.Ptr));
  if (!Fns.empty()) {
    ArrayType *AT = ArrayType::get(R.Ptr, Fns.size());
    SmallVector<Constant *, 32> Elts(Fns.begin(), Fns.end());
    List = new GlobalVariable(M, AT, true, GlobalValue::PrivateLinkage,
                              ConstantArray::get(AT, Elts), "__ompdsm_wd_functions");
  }
  Function *Ctor = Function::Create(FunctionType::get(Type::getVoidTy(Ctx), false),
                                    GlobalValue::InternalLinkage, RegisterName, M);
  Ctor->setDoesNotThrow();
  BasicBlock *Entry = BasicBlock::Create(Ctx, "", Ctor);
  BasicBlock *Call = BasicBlock::Create(Ctx, "register", Ctor);
  BasicBlock *Ret = BasicBlock::Create(Ctx, "done", Ctor);
  IRBuilder<> B(Entry);
  FunctionCallee Reg = R.Register;
  B.CreateCondBr(B.CreateIsNull(Reg.getCallee()), Ret, Call);
  B.SetInsertPoint(Call);
  B.CreateCall(R.Register, {B.getInt32(AbiVersion), List, B.getInt32(unsigned(Fns.size()))});
  B.CreateBr(Ret);
  B.SetInsertPoint(Ret);
  B.CreateRetVoid();
  appendToGlobalCtors(M, Ctor, 65535); // as ompcc's OMPDSM_register_unit
}

struct WriteDetection : PassInfoMixin<WriteDetection> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM)
  {
    // twice in one pipeline (or a module linked from instrumented ones)
    if (M.getFunction(RegisterName))
      return PreservedAnalyses::all();
    if (M.getDataLayout().getPointerSizeInBits(0) != 64)
      return PreservedAnalyses::all();
    Runtime R = declareRuntime(M);
    FunctionAnalysisManager &FAM =
        MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
    Counts C;
    SmallVector<Function *, 32> Defined;
    for (Function &F : M)
      if (!F.isDeclaration())
        Defined.push_back(&F);
    // (the list first: plain copies are added to the module as we go)
    for (Function *F : Defined) {
      if (F->getName().starts_with("OMPDSM_wd_") || F->hasFnAttribute(Attribute::Naked))
        continue;
      if (instrumentFunction(*F, FAM, R, C))
        FAM.invalidate(*F, PreservedAnalyses::none());
    }
    addRegistration(M, R, Defined);
    if (Report)
      errs() << "ompdsm-wd: " << M.getSourceFileName() << ": stores "
             << C.StoresInline << " inline, " << C.StoresCall << " calls, "
             << C.Skipped << " private; atomics " << C.Atomics
             << "; mem intrinsics " << C.MemIntrinsics << "; masked "
             << C.Masked << "; loop marks " << C.LoopMarks << " ("
             << C.LoopStrided << " strided) for " << C.LoopStores
             << " stores; guards " << C.Guards
             << " calls, " << C.Intrinsics << " intrinsics; functions "
             << Defined.size() << ", " << C.Plain << " with a plain copy\n";
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return true; }
};

} // namespace ompdsm_wd

// After vectorisation and the loop optimisations (the marks never stand in
// their way); LLVM 19 runs this callback at -O0 too.  The shared globals'
// alias scopes (globalias.cpp) go first, before the optimisations that use
// them.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
  return {LLVM_PLUGIN_API_VERSION, "ompdsm-wd", "1", [](PassBuilder &PB) {
            PB.registerPipelineStartEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) {
                  MPM.addPass(ompdsm_wd::GlobalScopes());
                });
            PB.registerOptimizerLastEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) {
                  MPM.addPass(ompdsm_wd::WriteDetection());
                });
          }};
}
