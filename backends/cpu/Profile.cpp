//===- Profile.cpp - Timing calls around each region ----------------------===//
//
// kiln-compile --profile makes the code time itself: each region a user
// can relate to the program - one loop nest of a fused region, one oneDNN
// call, one loop or conditional of the source - is bracketed by calls that
// tell the runtime when it begins and ends (kiln/ProfileAbi.h). Runs on
// memrefs, after the oneDNN calls are made and before linalg becomes
// loops, when every loop nest is still one op:
//
//   1. Walk the blocks of each function of the program (those
//      kiln-cpu-profile-names marked `kiln.profiled`). Classify each op of a
//      block:
//      - a call of oneDNN (dnnl_sgemm, kiln_dnnl_matmul,
//        kiln_dnnl_conv_f32/_bf16/_int8; DnnlCalls.h) or of kiln's packed
//        product (kiln_packed_matmul_f32), or the loop over a batch
//        of GEMM calls that kiln-cpu-matmul-to-dnnl makes, or the loop over the
//        attention kernels' calls (kiln-cpu-attention-calls): a library region;
//      - an scf.while, the scf.for of a kiln.for and an scf.if holding
//        regions: a control-flow region, whose blocks are walked in turn;
//      - a linalg op with loops, an scf.parallel or scf.forall, any other
//        scf.for: a loop nest (nothing inside it is walked: its iterations
//        may run on other threads);
//      - the scf.parallel of branches that run side by side
//        (kiln-cpu-concurrent-branches): not a region; the kernels in its
//        cases are classified in turn, and run on the threads of the
//        sections (each event on its thread in the trace);
//      - anything else (allocations, address arithmetic): not a region.
//   2. Name each region for a user (the kiln ops from the NameLocs of
//      kiln-cpu-profile-names, the iteration space, the source line) and
//      give it the next region number.
//   3. Bracket it with @kiln_profile_begin(number) / @kiln_profile_end.
//   4. Define those two functions (through the runtime's slots) and the
//      exported name table.
//
//===----------------------------------------------------------------------===//

#include "DnnlCalls.h"
#include "support/AttentionAbi.h"
#include "support/WinogradConv.h"

#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Passes.h"

#include "kiln/ProfileAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUPROFILE
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

using namespace mlir::kiln::dnnl;

static constexpr llvm::StringLiteral kBeginFunction = "kiln_profile_begin";
static constexpr llvm::StringLiteral kEndFunction = "kiln_profile_end";

namespace {
enum class ProfileKind { None, Library, ControlFlow, LoopNest };
} // namespace

/// A call of a GEMM of oneDNN, of its matmul primitive or of kiln's packed
/// product.
static bool isGemm(func::CallOp call) {
  return call.getCallee() == kSgemmFunction ||
         call.getCallee() == kMatmulFunction ||
         call.getCallee() == kPackedMatmulFunction;
}

/// A call of the attention kernels (kiln-cpu-attention-calls).
static bool isAttention(func::CallOp call) {
  return call.getCallee().starts_with("kiln_attention_f32_");
}

static func::CallOp libraryCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (call && (isGemm(call) || call.getCallee() == kConvFunction ||
               call.getCallee() == kConvBf16Function ||
               call.getCallee() == kConvInt8Function || isAttention(call)))
    return call;
  return nullptr;
}

/// The first library call inside `op` (itself included).
static func::CallOp firstLibraryCall(Operation *op) {
  func::CallOp found;
  op->walk<WalkOrder::PreOrder>([&](Operation *inner) {
    found = libraryCall(inner);
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

/// The name kiln-cpu-profile-names gave the op of `loc`, if it has one.
static StringRef opNameOf(Location loc) {
  if (auto named = dyn_cast<NameLoc>(loc))
    return named.getName().getValue();
  return {};
}

static ProfileKind kindOf(Operation *op);

/// Whether a block of `op`'s regions holds a region.
static bool holdsRegions(Operation *op) {
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &inner : block)
        if (kindOf(&inner) != ProfileKind::None)
          return true;
  return false;
}

static ProfileKind kindOf(Operation *op) {
  if (libraryCall(op))
    return ProfileKind::Library;
  // A linalg op without loops (on rank-0 buffers) is a few scalar
  // instructions, not worth two calls.
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.getNumLoops() ? ProfileKind::LoopNest : ProfileKind::None;
  if (isa<scf::WhileOp>(op))
    return ProfileKind::ControlFlow;
  if (isa<scf::IfOp>(op))
    return holdsRegions(op) ? ProfileKind::ControlFlow : ProfileKind::None;
  if (isa<scf::ForOp>(op) && opNameOf(op->getLoc()) == "for")
    return ProfileKind::ControlFlow;
  if (isa<scf::ForOp, scf::ParallelOp, scf::ForallOp>(op))
    return firstLibraryCall(op) ? ProfileKind::Library : ProfileKind::LoopNest;
  return ProfileKind::None;
}

/// " @ file:line" of the first file location in `loc`, or empty.
static std::string sourceOf(Location loc) {
  std::string result;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      result = (" @ " + llvm::sys::path::filename(file.getFilename()) + ":" +
                Twine(file.getLine()))
                   .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result;
}

static std::string joinDims(ArrayRef<int64_t> dims) {
  SmallVector<std::string> parts;
  for (int64_t dim : dims)
    parts.push_back(ShapedType::isDynamic(dim) ? "?" : std::to_string(dim));
  return llvm::join(parts, "x");
}

/// "dnnl_sgemm MxNxK" from the call's constant sizes, its operands 2 to 4
/// ("?" for a size that is not a constant); "kiln_packed_matmul MxNxK", N
/// the whole product's where the call takes a chunk of its columns;
/// for kiln_dnnl_matmul "dnnl_matmul MxNxK",
/// then " bf16", " u8s8", " s8s8", " u8u8" or " s8u8" (int8 products: A's
/// type, then B's) and
/// " (batch B)" where they apply (DnnlMatmulAbi.h).
static std::string gemmName(func::CallOp call) {
  auto constant = [&](unsigned i) -> std::optional<int64_t> {
    APInt value;
    if (i < call.getNumOperands() &&
        matchPattern(call.getOperand(i), m_ConstantInt(&value)))
      return value.getSExtValue();
    return std::nullopt;
  };
  bool matmul = call.getCallee() == kMatmulFunction;
  bool packed = call.getCallee() == kPackedMatmulFunction;
  unsigned first = matmul ? KILN_DNNL_MATMUL_M_OPERAND : packed ? 1 : 2;
  SmallVector<std::string> sizes;
  for (unsigned i = first; i < first + 3; ++i) {
    std::optional<int64_t> size = constant(i);
    // A chunk of the packed product's columns: min(chunk, N - column).
    if (!size && packed && i == first + 1)
      if (auto min = call.getOperand(i).getDefiningOp<arith::MinSIOp>())
        if (auto rest = min.getRhs().getDefiningOp<arith::SubIOp>()) {
          APInt value;
          if (matchPattern(rest.getLhs(), m_ConstantInt(&value)))
            size = value.getSExtValue();
        }
    sizes.push_back(size ? std::to_string(*size) : "?");
  }
  std::string name = (matmul   ? StringRef("dnnl_matmul")
                      : packed ? StringRef("kiln_packed_matmul")
                               : call.getCallee())
                         .str() +
                     " " + llvm::join(sizes, "x");
  if (!matmul)
    return name;
  std::optional<int64_t> flags = constant(KILN_DNNL_MATMUL_FLAGS_OPERAND);
  std::optional<int64_t> batch = constant(KILN_DNNL_MATMUL_BATCH_OPERAND);
  if (flags && (*flags & KILN_DNNL_MATMUL_BFLOAT16))
    name += " bf16";
  if (flags && (*flags & KILN_DNNL_MATMUL_INT8)) {
    name += (*flags & KILN_DNNL_MATMUL_UNSIGNED_A) ? " u8" : " s8";
    name += (*flags & KILN_DNNL_MATMUL_UNSIGNED_B) ? "u8" : "s8";
  }
  if (batch && *batch > 1)
    name += " (batch " + std::to_string(*batch) + ")";
  return name;
}

/// The constant i64 contents of the global whose address `pointer` is
/// (the descriptor kiln-cpu-conv-to-dnnl passes), or empty.
static SmallVector<int64_t> globalContents(Value pointer) {
  Operation *def = pointer.getDefiningOp();
  while (def && isa<LLVM::IntToPtrOp, arith::IndexCastOp,
                    memref::ExtractAlignedPointerAsIndexOp>(def))
    def = def->getOperand(0).getDefiningOp();
  auto get = dyn_cast_or_null<memref::GetGlobalOp>(def);
  if (!get)
    return {};
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  auto values = global ? dyn_cast_or_null<DenseIntElementsAttr>(
                             global.getConstantInitValue())
                       : nullptr;
  if (!values)
    return {};
  return llvm::to_vector(llvm::map_range(
      values.getValues<APInt>(), [](APInt v) { return v.getSExtValue(); }));
}

/// "dnnl_conv NxCxHxW -> NxOxH'xW' kKxK" and the epilogue oneDNN applies,
/// from the convolution's descriptor (see kiln-cpu-outline-dnnl-convs).
static std::string convName(func::CallOp call) {
  SmallVector<int64_t> d = call.getNumOperands() > 1
                               ? globalContents(call.getOperand(1))
                               : SmallVector<int64_t>();
  if (d.size() < KILN_DNNL_CONV_HEADER_SIZE ||
      d.size() != size_t(kiln_dnnl_conv_descriptor_size(d[0], d[5])))
    return "dnnl_conv";
  // After the header, one group of `rank` entries each: the input sizes,
  // the kernel sizes, the output sizes, ...
  int64_t rank = d[0];
  SmallVector<int64_t> input{d[2], d[3]}, output{d[2], d[4]}, kernel;
  for (int64_t i = 0; i < rank; ++i) {
    input.push_back(d[KILN_DNNL_CONV_HEADER_SIZE + i]);
    kernel.push_back(d[KILN_DNNL_CONV_HEADER_SIZE + rank + i]);
    output.push_back(d[KILN_DNNL_CONV_HEADER_SIZE + 2 * rank + i]);
  }
  std::string name = "dnnl_conv " + joinDims(input) + " -> " +
                     joinDims(output) + " k" + joinDims(kernel);
  int64_t flags = d[5];
  if (flags & KILN_DNNL_CONV_BFLOAT16)
    name += " bf16";
  if (flags & KILN_DNNL_CONV_WINOGRAD)
    name += " winograd";
  KilnWinogradTiling tiling;
  if ((flags & KILN_DNNL_CONV_OWN_WINOGRAD) &&
      kiln_winograd_conv_tiling(d.data(), &tiling)) {
    if (tiling.axis == KILN_WINOGRAD_SQUARE)
      name += " winograd-f4x4";
    else
      name += " winograd-f(" +
              std::to_string(tiling.positions - tiling.window + 1) + "," +
              std::to_string(tiling.window) + ")";
  }
  if (flags & KILN_DNNL_CONV_INT8)
    name += flags & KILN_DNNL_CONV_SIGNED_SRC ? " s8" : " u8";
  if (flags & KILN_DNNL_CONV_BIAS)
    name += " +bias";
  if (flags & KILN_DNNL_CONV_ADDEND)
    name += " +add";
  if (flags & KILN_DNNL_CONV_RELU)
    name += " +relu";
  if (flags & KILN_DNNL_CONV_CLIP)
    name += " +clip";
  if (flags & KILN_DNNL_CONV_SWISH)
    name += " +silu";
  return name;
}

/// The kiln ops a loop nest computes, in source order: "fused: a+b" for
/// several, "a" for one, the op's own name (less "linalg.") for none; and
/// where the first of them is, if that is known. A product or convolution
/// counts only where the nest computes one.
static std::string opsOf(Operation *op, std::string &where) {
  // Each named location: (line, column, name, file location); places
  // unknown sort last.
  SmallVector<std::tuple<unsigned, unsigned, StringRef, Location>> found;
  op->walk([&](Operation *inner) {
    inner->getLoc()->walk([&](Location loc) {
      StringRef name = opNameOf(loc);
      if (name.empty())
        return WalkResult::advance();
      Location child = cast<NameLoc>(loc).getChildLoc();
      auto file = dyn_cast<FileLineColLoc>(child);
      found.emplace_back(file ? file.getLine() : ~0u,
                         file ? file.getColumn() : ~0u, name, child);
      return WalkResult::advance();
    });
  });
  llvm::stable_sort(found, [](const auto &a, const auto &b) {
    return std::make_pair(std::get<0>(a), std::get<1>(a)) <
           std::make_pair(std::get<0>(b), std::get<1>(b));
  });
  // The epilogue of a product that oneDNN computes carries the product's
  // location too; the product is its own region then, and only a nest
  // holding the product itself (a contraction or convolution located at
  // it) is named after it.
  auto named = [](Operation *inner, StringRef name) {
    bool hit = false;
    inner->getLoc()->walk([&](Location loc) {
      hit |= opNameOf(loc) == name;
      return WalkResult::advance();
    });
    return hit;
  };
  llvm::StringSet<> products;
  op->walk([&](linalg::LinalgOp inner) {
    for (StringRef name : {"matmul", "conv"})
      if ((linalg::isaContractionOpInterface(inner) ||
           linalg::isaConvolutionOpInterface(inner)) &&
          named(inner, name))
        products.insert(name);
  });
  llvm::erase_if(found, [&](const auto &entry) {
    StringRef name = std::get<2>(entry);
    return (name == "matmul" || name == "conv") && !products.contains(name);
  });
  if (!found.empty() && std::get<0>(found.front()) != ~0u)
    where = sourceOf(std::get<3>(found.front()));
  llvm::SetVector<StringRef> names;
  for (auto &entry : found)
    names.insert(std::get<2>(entry));
  if (names.empty()) {
    StringRef own = op->getName().getStringRef();
    own.consume_front("linalg.");
    return own.str();
  }
  std::string joined = llvm::join(names, "+");
  return names.size() > 1 ? "fused: " + joined : joined;
}

/// The shape a loop nest works on: a linalg op's iteration space, or for a
/// loop the largest statically shaped buffer it reads or writes from
/// outside (a loop over tiles works on whole buffers).
static std::string shapeOf(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return joinDims(linalgOp.getStaticLoopRanges());
  MemRefType largest;
  op->walk([&](Operation *inner) {
    for (Value operand : inner->getOperands()) {
      auto type = dyn_cast<MemRefType>(operand.getType());
      if (!type || !type.hasStaticShape() ||
          op->isAncestor(operand.getParentRegion()->getParentOp()))
        continue;
      if (!largest || type.getNumElements() > largest.getNumElements())
        largest = type;
    }
  });
  return largest && largest.getRank() ? joinDims(largest.getShape())
                                      : std::string();
}

/// The iterations of an scf.for or scf.parallel with constant bounds.
static std::optional<int64_t> tripCount(Operation *loop) {
  SmallVector<Value> lows, highs, steps;
  if (auto parallel = dyn_cast<scf::ParallelOp>(loop)) {
    llvm::append_range(lows, parallel.getLowerBound());
    llvm::append_range(highs, parallel.getUpperBound());
    llvm::append_range(steps, parallel.getStep());
  } else if (auto serial = dyn_cast<scf::ForOp>(loop)) {
    lows = {serial.getLowerBound()};
    highs = {serial.getUpperBound()};
    steps = {serial.getStep()};
  }
  if (lows.empty())
    return std::nullopt;
  int64_t trips = 1;
  for (auto [low, high, step] : llvm::zip(lows, highs, steps)) {
    std::optional<int64_t> from = getConstantIntValue(low),
                           to = getConstantIntValue(high),
                           by = getConstantIntValue(step);
    if (!from || !to || !by || *by <= 0)
      return std::nullopt;
    trips *= llvm::divideCeil(std::max<int64_t>(*to - *from, 0), *by);
  }
  return trips;
}

/// "attention BxNqxNkxD (causal, masked)" or "attention_grad ..." from the
/// kernels' descriptor (AttentionAbi.h).
static std::string attentionName(func::CallOp call) {
  std::string name =
      call.getCallee().ends_with("backward") ? "attention_grad" : "attention";
  SmallVector<int64_t> d = globalContents(call.getOperand(0));
  if (d.size() < KILN_ATTENTION_HEADER_SIZE)
    return name;
  name += " " + joinDims({d[KILN_ATTENTION_BATCH], d[KILN_ATTENTION_QUERIES],
                          d[KILN_ATTENTION_KEYS], d[KILN_ATTENTION_HEAD_DIM]});
  int64_t flags = d[KILN_ATTENTION_FLAGS];
  if (flags & KILN_ATTENTION_CAUSAL)
    name += " causal";
  if (flags & KILN_ATTENTION_MASKED)
    name += " masked";
  return name;
}

static std::string regionName(Operation *op, ProfileKind kind) {
  std::string where = sourceOf(op->getLoc());
  switch (kind) {
  case ProfileKind::Library: {
    func::CallOp call = firstLibraryCall(op);
    if (isAttention(call))
      return attentionName(call) + where;
    std::string name = isGemm(call) ? gemmName(call) : convName(call);
    if (call != op) {
      // A loop over a batch of products, or over chunks of the columns of
      // one packed product.
      std::optional<int64_t> trips = tripCount(op);
      if (call.getCallee() == kPackedMatmulFunction)
        name += trips ? " (" + std::to_string(*trips) + " chunks)"
                      : std::string(" (chunks)");
      else
        name += trips ? " (batch " + std::to_string(*trips) + ")"
                      : std::string(" (batch)");
    }
    return name + where;
  }
  case ProfileKind::ControlFlow: {
    StringRef source = opNameOf(op->getLoc());
    if (source.empty())
      source = op->getName().getStringRef();
    return (source + where).str();
  }
  case ProfileKind::LoopNest: {
    std::string shape = shapeOf(op);
    std::string ops = opsOf(op, where);
    return ops + (shape.empty() ? "" : " " + shape) + where;
  }
  case ProfileKind::None:
    break;
  }
  llvm_unreachable("not a region");
}

namespace {
struct KilnCpuProfilePass
    : public kiln::impl::KilnCpuProfileBase<KilnCpuProfilePass> {
  void runOnOperation() override;

private:
  void instrumentBlock(Block &block);
  void bracket(Operation *op, StringRef name);
  void defineRuntimeInterface();

  std::vector<std::string> names;
};
} // namespace

void KilnCpuProfilePass::instrumentBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    // Branches that run side by side (kiln-cpu-concurrent-branches): each
    // kernel is timed in its section, on the thread that runs it.
    if (op.hasAttr(kiln::kConcurrentAttrName)) {
      if (auto sections =
              dyn_cast<scf::IndexSwitchOp>(op.getRegion(0).front().front()))
        for (Region &region : sections->getRegions())
          for (Block &inner : region)
            instrumentBlock(inner);
      continue;
    }
    ProfileKind kind = kindOf(&op);
    if (kind == ProfileKind::None)
      continue;
    bracket(&op, regionName(&op, kind));
    if (kind == ProfileKind::ControlFlow)
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          instrumentBlock(inner);
  }
}

void KilnCpuProfilePass::bracket(Operation *op, StringRef name) {
  auto id = static_cast<int32_t>(names.size());
  names.push_back(name.str());
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto call = [&](StringRef function) {
    Value number = b.create<arith::ConstantIntOp>(loc, id, 32);
    b.create<func::CallOp>(loc, function, TypeRange(), number);
  };
  call(kBeginFunction);
  b.setInsertionPointAfter(op);
  call(kEndFunction);
}

/// @kiln_profile_begin and @kiln_profile_end, which add the module's
/// region base and call the runtime's function in their slot (nothing
/// where the slot is empty), and the exported table of names.
void KilnCpuProfilePass::defineRuntimeInterface() {
  ModuleOp module = getOperation();
  MLIRContext *context = module.getContext();
  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i32 = b.getI32Type();
  auto exported = [&](Type type, StringRef symbol, bool constant,
                      Attribute value) {
    return b.create<LLVM::GlobalOp>(loc, type, constant,
                                    LLVM::Linkage::External, symbol, value);
  };

  std::string table;
  for (const std::string &name : names)
    table += name + '\0';
  exported(i32, KILN_PROFILE_REGION_COUNT, /*constant=*/true,
           b.getI32IntegerAttr(static_cast<int32_t>(names.size())));
  exported(LLVM::LLVMArrayType::get(b.getI8Type(), table.size()),
           KILN_PROFILE_REGION_NAMES, /*constant=*/true,
           b.getStringAttr(table));
  LLVM::GlobalOp base = exported(i32, KILN_PROFILE_REGION_BASE,
                                 /*constant=*/false, b.getI32IntegerAttr(0));

  for (auto [function, slotName] : {std::make_pair(kBeginFunction, "begin"),
                                    std::make_pair(kEndFunction, "end")}) {
    OpBuilder::InsertionGuard guard(b);
    LLVM::GlobalOp slot =
        exported(ptr, (KILN_PROFILE_SLOT_PREFIX + Twine(slotName)).str(),
                 /*constant=*/false, Attribute());
    b.setInsertionPointToStart(b.createBlock(&slot.getInitializerRegion()));
    b.create<LLVM::ReturnOp>(loc, b.create<LLVM::ZeroOp>(loc, ptr).getResult());
    b.setInsertionPointAfter(slot);

    auto func =
        b.create<func::FuncOp>(loc, function, b.getFunctionType({i32}, {}));
    func.setPrivate();
    b.setInsertionPointToStart(func.addEntryBlock());
    Value region = b.create<arith::AddIOp>(
        loc,
        b.create<LLVM::LoadOp>(loc, i32,
                               b.create<LLVM::AddressOfOp>(loc, base)),
        func.getArgument(0));
    Value mark = b.create<LLVM::LoadOp>(loc, ptr,
                                        b.create<LLVM::AddressOfOp>(loc, slot));
    Value bound = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ne, mark,
                                         b.create<LLVM::ZeroOp>(loc, ptr));
    auto ifBound = b.create<scf::IfOp>(loc, bound, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifBound.thenBlock());
    b.create<LLVM::CallOp>(
        loc,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), {i32}),
        ValueRange{mark, region});
    b.setInsertionPointAfter(ifBound);
    b.create<func::ReturnOp>(loc);
  }
}

void KilnCpuProfilePass::runOnOperation() {
  ModuleOp module = getOperation();
  if (module.lookupSymbol(kBeginFunction) ||
      module.lookupSymbol(KILN_PROFILE_REGION_NAMES)) {
    module.emitError("the module is instrumented for profiling already");
    return signalPassFailure();
  }
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(kiln::kProfiledFunctionAttrName))
      for (Block &block : func.getBody())
        instrumentBlock(block);
  defineRuntimeInterface();
}
