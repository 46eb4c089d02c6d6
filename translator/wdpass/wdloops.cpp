// wdloops.cpp - the write-detection pass's loop optimisation: the stores of
// a loop that together write one contiguous range every iteration get one
// OMPDSM_wd_mark over all iterations' bytes after the loop (or, when the
// ranges of successive iterations do not touch, one OMPDSM_wd_mark_strided
// over them), instead of a mark per iteration (docs/ompcc.md, "Write
// detection").  The mark stays
// after the stores: nothing in the loop may release (no call, fence or
// atomic), so no release can see the stores without their marks.
// Addresses that are affine only under assumptions (ompcc's int loop
// variable computed from its unsigned long long counter: sext(trunc(k)))
// get them checked once before the loop, which keeps the marks per
// iteration when they do not hold.
#include "wdpass.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"

using namespace llvm;

namespace ompdsm_wd {

// No call in L but intrinsics that only compute, only hint, or are marked
// where they are; no fence; no atomic.
static bool quietLoop(const Loop *L)
{
  for (BasicBlock *BB : L->blocks()) {
    for (Instruction &I : *BB) {
      if (isa<FenceInst>(I) || I.isAtomic())
        return false;
      auto *CB = dyn_cast<CallBase>(&I);
      if (!CB)
        continue;
      auto *II = dyn_cast<IntrinsicInst>(CB);
      if (!II || isa<AtomicMemIntrinsic>(II))
        return false;
      if (isa<DbgInfoIntrinsic>(II) || isa<AnyMemIntrinsic>(II) || !II->mayHaveSideEffects())
        continue;
      switch (II->getIntrinsicID()) {
      case Intrinsic::masked_store: case Intrinsic::masked_scatter:
      case Intrinsic::masked_compressstore: case Intrinsic::assume:
      case Intrinsic::experimental_noalias_scope_decl:
      case Intrinsic::lifetime_start: case Intrinsic::lifetime_end:
        continue;
      default:
        return false;
      }
    }
  }
  return true;
}

// A store of the loop: its address at the first iteration is Start + Off
// (Start: its group's), it writes W bytes, and its address moves by the
// group's stride each iteration.
struct Member {
  StoreInst *S;
  int64_t Off;
  uint64_t W;
};

// Stores with one stride whose starting addresses differ by constants.
struct Group {
  int64_t Stride;
  const SCEV *Start;
  SmallVector<Member, 4> Members;
};

// One mark before the loop and one after it: [Lowest, Lowest + Len), aligned to A (that of
// the store whose bytes start there); when Stride is not 0, only Count
// blocks of Width bytes at Lowest, Lowest + Stride, ... within it.
struct LoopMark {
  const SCEV *Lowest, *Len;
  Align A;
  uint64_t Width = 0, Stride = 0;
  const SCEV *Count = nullptr;
  SmallVector<StoreInst *, 4> Stores;
};

struct Plan {
  Loop *L;
  // the assumptions the addresses and the trip count rely on
  std::unique_ptr<PredicatedScalarEvolution> PSE;
  SmallVector<LoopMark, 2> Marks;
};

// Splits a group into runs of members whose bytes of one iteration are
// contiguous; a run at least as long as the stride covers, over all
// iterations, one contiguous range: the union of what its stores wrote.  A
// shorter run writes one block a stride (SP's three of five components,
// every other element): a strided mark, exactly its bytes.
static void groupMarks(ScalarEvolution &SE, const SCEV *BTC64, Group &G,
                       SmallVectorImpl<LoopMark> &Out)
{
  llvm::sort(G.Members, [](const Member &A, const Member &B) { return A.Off < B.Off; });
  Type *I64 = BTC64->getType();
  uint64_t AbsStride = uint64_t(G.Stride < 0 ? -G.Stride : G.Stride);
  for (size_t First = 0; First < G.Members.size();) {
    int64_t Lo = G.Members[First].Off, Hi = Lo + int64_t(G.Members[First].W);
    size_t End = First + 1;
    while (End < G.Members.size() && G.Members[End].Off <= Hi) {
      Hi = std::max(Hi, G.Members[End].Off + int64_t(G.Members[End].W));
      End++;
    }
    LoopMark M;
    const SCEV *Lowest = SE.getAddExpr(G.Start, SE.getConstant(I64, uint64_t(Lo), true));
    if (G.Stride < 0) // the last iteration's
      Lowest = SE.getAddExpr(Lowest, SE.getMulExpr(BTC64, SE.getConstant(I64, uint64_t(G.Stride), true)));
    M.Lowest = Lowest;
    M.A = G.Members[First].S->getAlign();
    M.Len = SE.getAddExpr(SE.getMulExpr(BTC64, SE.getConstant(I64, AbsStride)),
                          SE.getConstant(I64, uint64_t(Hi - Lo)));
    if (uint64_t(Hi - Lo) < AbsStride) {
      M.Width = uint64_t(Hi - Lo);
      M.Stride = AbsStride;
      M.Count = SE.getAddExpr(BTC64, SE.getOne(I64));
    }
    for (size_t K = First; K < End; K++)
      M.Stores.push_back(G.Members[K].S);
    Out.push_back(std::move(M));
    First = End;
  }
}

// The marks one loop can take: L's only exit leaves from its latch, its
// trip count is computable and it is quiet; a store qualifies when it is
// in L itself (not a subloop), runs every iteration (its block dominates
// the latch) and its address is an affine recurrence of L with a constant
// stride, as it is or under assumptions.
static void planLoop(ScalarEvolution &SE, DominatorTree &DT, LoopInfo &LI,
                     const DataLayout &DL, ArrayRef<StoreInst *> Stores,
                     Type *I64, Plan &P)
{
  Loop *L = P.L;
  BasicBlock *Latch = L->getLoopLatch();
  if (!Latch || L->getExitingBlock() != Latch || !L->getExitBlock() || !quietLoop(L))
    return;
  P.PSE = std::make_unique<PredicatedScalarEvolution>(SE, *L);
  const SCEV *BTC = P.PSE->getBackedgeTakenCount();
  if (isa<SCEVCouldNotCompute>(BTC))
    return;
  SmallVector<Group, 4> Groups;
  for (StoreInst *S : Stores) {
    if (LI.getLoopFor(S->getParent()) != L || !DT.dominates(S->getParent(), Latch))
      continue;
    TypeSize TS = DL.getTypeStoreSize(S->getValueOperand()->getType());
    auto *AR = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(S->getPointerOperand()));
    if (!AR || AR->getLoop() != L)
      AR = P.PSE->getAsAddRec(S->getPointerOperand());
    if (TS.isScalable() || !AR || AR->getLoop() != L || !AR->isAffine())
      continue;
    auto *Step = dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE));
    if (!Step || Step->getAPInt().getSignificantBits() > 32 || Step->getAPInt().isZero())
      continue;
    int64_t Stride = Step->getAPInt().getSExtValue();
    Member M = {S, 0, TS.getFixedValue()};
    Group *In = nullptr;
    for (Group &G : Groups) {
      if (G.Stride != Stride)
        continue;
      auto *D = dyn_cast<SCEVConstant>(SE.getMinusSCEV(AR->getStart(), G.Start));
      if (D && D->getAPInt().getSignificantBits() <= 32) {
        M.Off = D->getAPInt().getSExtValue();
        In = &G;
        break;
      }
    }
    if (!In) {
      Groups.push_back({Stride, AR->getStart(), {}});
      In = &Groups.back();
    }
    In->Members.push_back(M);
  }
  const SCEV *BTC64 = SE.getTruncateOrZeroExtend(BTC, I64);
  for (Group &G : Groups)
    groupMarks(SE, BTC64, G, P.Marks);
}

void markLoops(Function &F, FunctionAnalysisManager &FAM, const Runtime &R,
               const Entry &E, ArrayRef<StoreInst *> Stores,
               DenseMap<Instruction *, Value *> &Done, Counts &C)
{
  if (Stores.empty())
    return;
  auto &LI = FAM.getResult<LoopAnalysis>(F);
  if (LI.empty())
    return;
  auto &SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
  auto &DT = FAM.getResult<DominatorTreeAnalysis>(F);
  const DataLayout &DL = F.getDataLayout();
  SmallVector<Plan, 8> Plans;
  for (Loop *L : LI.getLoopsInPreorder()) {
    Plan P = {L, nullptr, {}};
    planLoop(SE, DT, LI, DL, Stores, R.I64, P);
    // (one block entering it: the range is marked before the loop too)
    if (!P.Marks.empty() && L->getLoopPredecessor())
      Plans.push_back(std::move(P));
  }
  // The edges out of the loops first (with LoopInfo and the dominator tree
  // kept up to date for the expander), then the addresses and lengths,
  // then the marks, whose branches nothing after them needs analysed.
  SmallVector<Instruction *, 8> At;
  for (Plan &P : Plans) {
    BasicBlock *Latch = P.L->getLoopLatch(), *Exit = P.L->getExitBlock();
    if (Exit->getSinglePredecessor() == Latch)
      At.push_back(&*Exit->getFirstInsertionPt());
    else
      At.push_back(SplitEdge(Latch, Exit, &DT, &LI)->getTerminator());
  }
  SCEVExpander Exp(SE, DL, "wd.loop");
  struct Expanded {
    Instruction *At;
    Value *P, *Len;
    Align A;
    Value *Fails; // the assumptions do not hold (null: there are none)
    uint64_t Width, Stride;
    Value *Count; // (strided marks)
  };
  // Before the loop: the same range, marked in the block entering it (see
  // instrument in wdpass.cpp: a mark before every store and one after).
  SmallVector<Instruction *, 8> Pre;
  for (Plan &P : Plans) {
    // (a block that only enters the loop: one that may branch past it
    // would mark a range the loop never stores)
    BasicBlock *Ph = P.L->getLoopPreheader();
    if (!Ph)
      Ph = SplitEdge(P.L->getLoopPredecessor(), P.L->getHeader(), &DT, &LI);
    Pre.push_back(Ph->getTerminator());
  }
  SmallVector<Expanded, 8> Marks;
  for (size_t K = 0; K < Plans.size(); K++) {
    Plan &P = Plans[K];
    Value *Fails = nullptr;
    for (LoopMark &M : P.Marks) {
      if (!Exp.isSafeToExpandAt(M.Lowest, At[K]) || !Exp.isSafeToExpandAt(M.Len, At[K]) ||
          !Exp.isSafeToExpandAt(M.Lowest, Pre[K]) || !Exp.isSafeToExpandAt(M.Len, Pre[K]) ||
          (M.Count && (!Exp.isSafeToExpandAt(M.Count, At[K]) ||
                       !Exp.isSafeToExpandAt(M.Count, Pre[K]))))
        continue;
      // (checked before the loop is entered or not: a few compares)
      if (!Fails && !P.PSE->getPredicate().isAlwaysTrue())
        Fails = Exp.expandCodeForPredicate(&P.PSE->getPredicate(),
                                           P.L->getLoopPredecessor()->getTerminator());
      Value *PLowest = Exp.expandCodeFor(M.Lowest, R.Ptr, Pre[K]);
      Value *PLen = Exp.expandCodeFor(M.Len, R.I64, Pre[K]);
      Value *PCount = M.Count ? Exp.expandCodeFor(M.Count, R.I64, Pre[K]) : nullptr;
      Marks.push_back({Pre[K], PLowest, PLen, M.A, Fails, M.Width, M.Stride, PCount});
      Value *Lowest = Exp.expandCodeFor(M.Lowest, R.Ptr, At[K]);
      Value *Len = Exp.expandCodeFor(M.Len, R.I64, At[K]);
      Value *Count = M.Count ? Exp.expandCodeFor(M.Count, R.I64, At[K]) : nullptr;
      Marks.push_back({At[K], Lowest, Len, M.A, Fails, M.Width, M.Stride, Count});
      for (StoreInst *S : M.Stores)
        Done[S] = Fails;
      C.LoopStores += unsigned(M.Stores.size());
    }
  }
  for (size_t K = 0; K < Marks.size(); K++) {
    Expanded &M = Marks[K];
    IRBuilder<> B(M.At);
    Value *Cond = M.Fails ? B.CreateNot(M.Fails) : nullptr;
    if (M.Stride)
      emitStridedMark(B, R, E, M.P, M.Len, M.Width, M.Stride, M.Count, Cond);
    else
      emitMark(B, R, E, M.P, M.Len, M.A, Cond, C, false);
    if (K & 1) { // (each range twice: before the loop and after it)
      C.LoopMarks++;
      C.LoopStrided += M.Stride != 0;
    }
  }
}

} // namespace ompdsm_wd
