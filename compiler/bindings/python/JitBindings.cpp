//===- JitBindings.cpp - Tracing, compiling and calling from Python -------===//
//
// kiln._kiln's side of kiln.jit: trace a Python callable into a
// TracedFunction, compile it with the same driver as kiln-compile, and call
// the loaded code on numpy arrays.
//
// Dispatcher is the cached-call fast path. kiln.jit registers each compiled
// signature called without keywords or static arguments: the pytree
// structure of the arguments (kiln/_tree.py's TreeDef, mirrored here as a
// pre-order list of nodes) and the type, dtype and shape of every leaf. A
// later call whose arguments match one goes from Python straight to the
// compiled code here: the match flattens the arguments as it walks them,
// and the outputs are rebuilt in their structure, without building a key
// or running Python code. Anything else returns the `miss` sentinel and
// kiln.jit takes its general path.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"
#include "ModuleCapsule.h"
#include "NumpyTensors.h"

#include "kiln/Jit.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <pybind11/stl.h>

#include <memory>
#include <regex>

using namespace kiln;
using namespace kiln::python;

namespace {

/// What one argument of a cached signature was.
struct ArgumentSpec {
  enum Kind : uint8_t { Array, Float, Int, Bool } kind;
  kiln_dtype_t dtype;
  int numpyType = -1;
  std::vector<int64_t> shape;
};

/// One node of a pytree structure; a structure is its nodes in pre-order.
struct TreeNode {
  enum Kind : uint8_t { Leaf, None, Tuple, List, Dict, NamedTuple } kind;
  /// Number of children (containers).
  size_t size = 0;
  /// Dict: the keys, in the sorted order of kiln/_tree.py.
  std::vector<py::object> keys;
  /// NamedTuple: its class.
  py::object type;
};
using Tree = std::vector<TreeNode>;

/// Appends the nodes of a kiln._tree.TreeDef to `tree`.
void appendTree(py::handle treedef, Tree &tree) {
  std::string kind = treedef.attr("kind").cast<std::string>();
  TreeNode node;
  py::tuple children = treedef.attr("children");
  node.size = children.size();
  if (kind == "leaf") {
    node.kind = TreeNode::Leaf;
  } else if (kind == "none") {
    node.kind = TreeNode::None;
  } else if (kind == "tuple") {
    node.kind = TreeNode::Tuple;
  } else if (kind == "list") {
    node.kind = TreeNode::List;
  } else if (kind == "dict") {
    node.kind = TreeNode::Dict;
    for (py::handle key : treedef.attr("meta"))
      node.keys.push_back(py::reinterpret_borrow<py::object>(key));
  } else {
    node.kind = TreeNode::NamedTuple;
    node.type = treedef.attr("meta");
  }
  tree.push_back(std::move(node));
  for (py::handle child : children)
    appendTree(child, tree);
}

/// The spec of a Python argument as kiln.jit traces it; false for values
/// the fast path does not take (pytrees, tensors, other objects).
bool describeArgument(py::handle arg, ArgumentSpec &spec) {
  PyObject *object = arg.ptr();
  if (PyBool_Check(object)) {
    spec = {ArgumentSpec::Bool, KILN_DTYPE_I1, -1, {}};
    return true;
  }
  if (PyLong_CheckExact(object)) {
    std::optional<DType> dtype = pythonIntDType(object);
    if (!dtype)
      return false;
    spec = {ArgumentSpec::Int,
            static_cast<kiln_dtype_t>(toElementType(*dtype)), -1, {}};
    return true;
  }
  if (PyFloat_CheckExact(object)) {
    spec = {ArgumentSpec::Float, KILN_DTYPE_F32, -1, {}};
    return true;
  }
  if (!py::isinstance<py::array>(arg))
    return false;
  auto array = py::reinterpret_borrow<py::array>(arg);
  int num = array.dtype().num();
  std::optional<kiln_dtype_t> dtype = DTypeTable::get().fromNumpy(num);
  if (!dtype)
    return false;
  spec.kind = ArgumentSpec::Array;
  spec.dtype = *dtype;
  spec.numpyType = num;
  spec.shape.assign(array.shape(), array.shape() + array.ndim());
  return true;
}

/// True if `arg` has the type, dtype and shape of `spec`.
bool matches(py::handle arg, const ArgumentSpec &spec) {
  PyObject *object = arg.ptr();
  switch (spec.kind) {
  case ArgumentSpec::Bool:
    return PyBool_Check(object);
  case ArgumentSpec::Float:
    return PyFloat_CheckExact(object);
  case ArgumentSpec::Int: {
    if (!PyLong_CheckExact(object))
      return false;
    std::optional<DType> dtype = pythonIntDType(object);
    return dtype && static_cast<kiln_dtype_t>(toElementType(*dtype)) ==
                        spec.dtype;
  }
  case ArgumentSpec::Array: {
    if (!py::isinstance<py::array>(arg))
      return false;
    auto array = py::reinterpret_borrow<py::array>(arg);
    if (array.dtype().num() != spec.numpyType ||
        static_cast<size_t>(array.ndim()) != spec.shape.size())
      return false;
    const py::ssize_t *shape = array.shape();
    for (size_t i = 0; i < spec.shape.size(); ++i)
      if (shape[i] != spec.shape[i])
        return false;
    return true;
  }
  }
  return false;
}

/// A compiled signature: the arguments' structure and leaves, the
/// function, and the structure of its outputs.
struct DispatchEntry {
  Tree arguments;
  std::vector<ArgumentSpec> leaves;
  std::shared_ptr<CompiledFunction> compiled;
  Tree outputs;
};

/// Walks `value` along the structure from `entry.arguments[node]`,
/// checking every leaf against its spec and collecting it in `found`;
/// false at the first difference.
bool matchTree(py::handle value, const DispatchEntry &entry, size_t &node,
               std::vector<py::handle> &found) {
  const TreeNode &expected = entry.arguments[node++];
  PyObject *object = value.ptr();
  switch (expected.kind) {
  case TreeNode::Leaf:
    if (found.size() >= entry.leaves.size() ||
        !matches(value, entry.leaves[found.size()]))
      return false;
    found.push_back(value);
    return true;
  case TreeNode::None:
    return object == Py_None;
  case TreeNode::Tuple:
  case TreeNode::NamedTuple:
  case TreeNode::List: {
    bool sameType =
        expected.kind == TreeNode::Tuple  ? PyTuple_CheckExact(object)
        : expected.kind == TreeNode::List ? PyList_CheckExact(object)
                                          : Py_TYPE(object) ==
                                                reinterpret_cast<PyTypeObject *>(
                                                    expected.type.ptr());
    // Tuples (named ones too) and lists are both "fast sequences".
    if (!sameType ||
        static_cast<size_t>(PySequence_Fast_GET_SIZE(object)) != expected.size)
      return false;
    for (size_t i = 0; i < expected.size; ++i)
      if (!matchTree(PySequence_Fast_GET_ITEM(object, i), entry, node, found))
        return false;
    return true;
  }
  case TreeNode::Dict:
    if (!PyDict_CheckExact(object) ||
        static_cast<size_t>(PyDict_Size(object)) != expected.size)
      return false;
    for (const py::object &key : expected.keys) {
      PyObject *item = PyDict_GetItemWithError(object, key.ptr());
      if (!item) {
        PyErr_Clear();
        return false;
      }
      if (!matchTree(item, entry, node, found))
        return false;
    }
    return true;
  }
  return false;
}

/// The outputs in their structure, from `tree[node]` on.
py::object buildTree(const Tree &tree, size_t &node,
                     std::vector<py::array> &leaves, size_t &leaf) {
  const TreeNode &current = tree[node++];
  switch (current.kind) {
  case TreeNode::Leaf:
    return std::move(leaves[leaf++]);
  case TreeNode::None:
    return py::none();
  case TreeNode::List: {
    py::list list(current.size);
    for (size_t i = 0; i < current.size; ++i)
      list[i] = buildTree(tree, node, leaves, leaf);
    return std::move(list);
  }
  case TreeNode::Dict: {
    py::dict dict;
    for (const py::object &key : current.keys)
      dict[key] = buildTree(tree, node, leaves, leaf);
    return std::move(dict);
  }
  case TreeNode::Tuple:
  case TreeNode::NamedTuple: {
    py::tuple tuple(current.size);
    for (size_t i = 0; i < current.size; ++i)
      tuple[i] = buildTree(tree, node, leaves, leaf);
    if (current.kind == TreeNode::NamedTuple)
      return current.type(*tuple);
    return std::move(tuple);
  }
  }
  return py::none();
}

/// A rank-0 tensor holding the Python number `arg` as `dtype`.
TensorPtr scalarTensor(py::handle arg, kiln_dtype_t dtype) {
  kiln_tensor_t *tensor = nullptr;
  union {
    float f32;
    int32_t i32;
    int64_t i64;
    bool i1;
  } value;
  switch (dtype) {
  case KILN_DTYPE_F32:
    value.f32 = static_cast<float>(PyFloat_AsDouble(arg.ptr()));
    break;
  case KILN_DTYPE_I32:
    value.i32 = static_cast<int32_t>(PyLong_AsLongLong(arg.ptr()));
    break;
  case KILN_DTYPE_I64:
    value.i64 = PyLong_AsLongLong(arg.ptr());
    break;
  default:
    value.i1 = arg.ptr() == Py_True;
    break;
  }
  check(kiln_tensor_create(dtype, 0, nullptr, &value, &tensor));
  return TensorPtr(tensor);
}

/// Calls `function` with `args` already known to match `arguments`.
std::vector<py::array> callMatched(const CompiledFunction &compiled,
                                   const std::vector<ArgumentSpec> &arguments,
                                   const std::vector<py::handle> &args) {
  CallInputs inputs(compiled.function());
  for (size_t index = 0; index < args.size(); ++index) {
    const ArgumentSpec &spec = arguments[index];
    if (spec.kind == ArgumentSpec::Array)
      inputs.addValue(args[index], spec.dtype, [&] {
        return "argument " + std::to_string(index);
      });
    else
      inputs.add(scalarTensor(args[index], spec.dtype));
  }
  return callOnTensors(compiled.function(), inputs.tensors.data(),
                       inputs.tensors.size(), compiled.comm(), &inputs.viewed);
}

/// A communicator (kiln_comm_t) owned by Python. The functions compiled
/// for it keep it alive (kiln.jit holds it), since they call through it.
class Communicator {
public:
  explicit Communicator(kiln_comm_t *comm) : comm(comm) {}
  /// A communicator that \p owner owns (an elastic run's), kept alive by it.
  Communicator(kiln_comm_t *comm, std::shared_ptr<void> owner)
      : comm(comm), owner(std::move(owner)) {}
  ~Communicator() {
    if (!owner)
      kiln_comm_release(comm);
  }
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;
  kiln_comm_t *get() const { return comm; }

private:
  kiln_comm_t *comm;
  std::shared_ptr<void> owner;
};

/// A worker of an elastic run (kiln_elastic_t), owned by Python; its
/// communicator is one Communicator object across generations.
class Elastic {
public:
  Elastic() {
    kiln_elastic_t *opened = nullptr;
    check(kiln_elastic_open(&opened));
    elastic = std::shared_ptr<kiln_elastic_t>(opened, kiln_elastic_release);
    comm = std::make_shared<Communicator>(kiln_elastic_comm(opened), elastic);
  }
  kiln_elastic_t *get() const { return elastic.get(); }
  const std::shared_ptr<Communicator> &communicator() const { return comm; }

private:
  std::shared_ptr<kiln_elastic_t> elastic;
  std::shared_ptr<Communicator> comm;
};

/// The fast path of one kiln.jit function.
class Dispatcher {
public:
  explicit Dispatcher(py::object miss) : miss(std::move(miss)) {}

  /// Calls the compiled function whose signature `args` match, or returns
  /// the miss sentinel.
  py::object call(py::args args) {
    std::vector<py::handle> leaves;
    for (size_t e = entries.size(); e-- > 0;) {
      const DispatchEntry &entry = entries[e];
      leaves.clear();
      size_t node = 0;
      if (!matchTree(args, entry, node, leaves) ||
          leaves.size() != entry.leaves.size())
        continue;
      std::vector<py::array> outputs =
          callMatched(*entry.compiled, entry.leaves, leaves);
      size_t outNode = 0, outLeaf = 0;
      return buildTree(entry.outputs, outNode, outputs, outLeaf);
    }
    return miss;
  }

  /// Registers `compiled` for calls whose arguments have the structure
  /// `arguments` (a TreeDef of the argument tuple) and leaves like
  /// `leaves`, returning outputs structured as `outputs` (a TreeDef).
  /// Returns false (and registers nothing) if a leaf is not an array or a
  /// Python number.
  bool add(py::handle arguments, py::handle leaves,
           std::shared_ptr<CompiledFunction> compiled, py::handle outputs) {
    DispatchEntry entry;
    for (py::handle leaf : leaves) {
      ArgumentSpec spec;
      if (!describeArgument(leaf, spec))
        return false;
      entry.leaves.push_back(std::move(spec));
    }
    appendTree(arguments, entry.arguments);
    appendTree(outputs, entry.outputs);
    entry.compiled = std::move(compiled);
    entries.push_back(std::move(entry));
    return true;
  }

  size_t size() const { return entries.size(); }

private:
  py::object miss;
  std::vector<DispatchEntry> entries;
};

py::list specList(const std::vector<TensorSpec> &specs) {
  py::list list;
  for (const TensorSpec &spec : specs)
    list.append(py::make_tuple(spec.name, static_cast<int>(spec.dtype),
                               py::tuple(py::cast(spec.shape))));
  return list;
}
} // namespace

void kiln::python::bindJit(py::module_ &m) {
  py::class_<TracedFunction>(m, "TracedFunction")
      .def_property_readonly("name", &TracedFunction::name)
      .def("text", &TracedFunction::str, py::arg("with_locations") = false,
           "The kiln IR of the function (MLIR text).")
      .def_property_readonly("inputs",
                             [](const TracedFunction &f) {
                               return specList(f.inputSpecs());
                             })
      .def_property_readonly("outputs", [](const TracedFunction &f) {
        return specList(f.outputSpecs());
      });

  m.def(
      "trace",
      [](std::string name, py::handle specs, py::function fn, bool capture) {
        SourceLoc loc = callerLocation();
        std::vector<TensorSpec> inputs;
        for (py::handle item : specs) {
          auto spec = item.cast<py::tuple>();
          inputs.push_back(TensorSpec{dtypeFromCode(spec[0].cast<int>()),
                                      spec[1].cast<Shape>(),
                                      spec[2].cast<std::string>()});
        }
        if (!capture)
          return detail::traceImpl(std::move(name), std::move(inputs),
                                   regionFn(fn), loc);
        Tensors captured;
        return detail::traceCapturing(std::move(name), std::move(inputs),
                                      regionFn(fn), loc, captured);
      },
      py::arg("name"), py::arg("specs"), py::arg("fn"),
      py::arg("capture") = false,
      "Traces fn(list of Tensors) -> list of Tensors on inputs given as "
      "[(dtype code, shape, name)]. With capture, fn may use tensors of "
      "the active trace (extra inputs of the result).");

  py::class_<CompiledFunction, std::shared_ptr<CompiledFunction>>(
      m, "CompiledFunction")
      .def_property_readonly("name", &CompiledFunction::name)
      .def_property_readonly("compile_seconds",
                             &CompiledFunction::compileSeconds)
      .def_property_readonly(
          "from_cache", &CompiledFunction::fromCache,
          "Whether the module was read from $KILN_CACHE_DIR instead of "
          "compiled.")
      .def_property_readonly(
          "unused_donations", &CompiledFunction::unusedDonations,
          "The donated inputs no output matched in dtype and shape.")
      .def_property_readonly("warnings", &CompiledFunction::warnings,
                             "The compiler's warnings, as text.")
      .def("save", &CompiledFunction::save, py::arg("path"),
           "Writes the .kmod for the runtime alone (kiln_runtime).")
      .def("module_bytes",
           [](const CompiledFunction &f) {
             const std::vector<uint8_t> &bytes = f.moduleBytes();
             return py::bytes(reinterpret_cast<const char *>(bytes.data()),
                              bytes.size());
           })
      .def(
          "_module_capsule",
          [](const CompiledFunction &f) { return moduleCapsule(f.module()); },
          "The loaded module, for kiln_runtime.Module._share.")
      .def(
          "call",
          [](const CompiledFunction &f, py::handle args) {
            std::vector<py::array> results =
                callFunction(f.function(), args, f.comm());
            py::tuple tuple(results.size());
            for (size_t i = 0; i < results.size(); ++i)
              tuple[i] = std::move(results[i]);
            return tuple;
          },
          "Calls the function on a sequence of arrays; returns a tuple.");

  using CreateFn = kiln_status_t (*)(kiln_comm_t **);
  auto creator = [](CreateFn create) {
    return [create] {
      kiln_comm_t *comm = nullptr;
      check(create(&comm));
      return std::make_shared<Communicator>(comm);
    };
  };
  py::class_<Communicator, std::shared_ptr<Communicator>>(m, "Communicator")
      .def_static(
          "mpi", creator(kiln_comm_create_mpi),
          "The ranks of the MPI run this process belongs to (mpirun -n N).")
      .def_static("gloo", creator(kiln_comm_create_gloo),
                  "The ranks of a run that meet through a store over Gloo: "
                  "KILN_RANK, KILN_WORLD_SIZE and KILN_STORE name this "
                  "process's rank, the run's size and the store "
                  "(file:DIRECTORY or redis://HOST[:PORT]); none of them "
                  "set, a run of this process alone.")
      .def_static("single", creator(kiln_comm_create_self),
                  "A run of this process alone: every collective is a copy.")
      .def_property_readonly(
          "rank", [](const Communicator &c) { return kiln_comm_rank(c.get()); })
      .def_property_readonly(
          "size", [](const Communicator &c) { return kiln_comm_size(c.get()); })
      .def("barrier",
           [](Communicator &c) {
             kiln_status_t status;
             {
               py::gil_scoped_release release;
               status = kiln_comm_barrier(c.get());
             }
             check(status);
           })
      .def(
          "all_gather",
          [](Communicator &c, py::array block) {
            py::array contiguous =
                py::array::ensure(block, py::array::c_style);
            if (!contiguous)
              throw py::type_error("all_gather needs an array");
            std::vector<py::ssize_t> shape(contiguous.shape(),
                                           contiguous.shape() +
                                               contiguous.ndim());
            if (shape.empty())
              shape.push_back(1);
            shape[0] *= kiln_comm_size(c.get());
            py::array whole(contiguous.dtype(), shape);
            kiln_status_t status;
            {
              py::gil_scoped_release release;
              status = kiln_comm_all_gather(c.get(), contiguous.data(),
                                            contiguous.nbytes(),
                                            whole.mutable_data());
            }
            check(status);
            return whole;
          },
          py::arg("block"),
          "The blocks of every rank joined along the leading dimension, in "
          "rank order (a rank-0 block counts as one row). Every rank must "
          "call it with a block of the same size and dtype.")
      .def(
          "broadcast",
          [](Communicator &c, py::array data, int64_t root) {
            py::array copy = py::array::ensure(data, py::array::c_style |
                                                         py::array::forcecast);
            if (!copy)
              throw py::type_error("broadcast needs an array");
            copy = py::array(copy.dtype(),
                             std::vector<py::ssize_t>(
                                 copy.shape(), copy.shape() + copy.ndim()),
                             copy.data());
            kiln_status_t status;
            {
              py::gil_scoped_release release;
              status = kiln_comm_broadcast(c.get(), copy.mutable_data(),
                                           copy.nbytes(), root);
            }
            check(status);
            return copy;
          },
          py::arg("data"), py::arg("root") = 0,
          "Rank root's `data` on every rank (a new array). Every rank must "
          "call it with an array of the same size and dtype.");

  py::class_<Elastic, std::shared_ptr<Elastic>>(m, "Elastic")
      .def(py::init<>(),
           "Opens this worker's part in the elastic run its environment "
           "names (kiln-launch --nproc MIN:MAX sets it).")
      .def_property_readonly("comm", &Elastic::communicator,
                             "The communicator over the members of the "
                             "generation joined last.")
      .def(
          "rendezvous",
          [](Elastic &e, int64_t commitSerial) {
            int64_t generation = -1, root = 0;
            kiln_status_t status;
            {
              py::gil_scoped_release release;
              status = kiln_elastic_rendezvous(e.get(), commitSerial,
                                               &generation, &root);
            }
            check(status);
            return py::make_tuple(generation, root);
          },
          py::arg("commit_serial"),
          "Joins the next generation; returns (generation, root): -1 when "
          "the run finished first, and the rank holding the newest state.")
      .def(
          "members_waiting",
          [](Elastic &e) {
            int waiting = 0;
            kiln_status_t status;
            {
              py::gil_scoped_release release;
              status = kiln_elastic_members_waiting(e.get(), &waiting);
            }
            check(status);
            return waiting != 0;
          },
          "Whether workers wait to join (agreed by every member).")
      .def(
          "finish", [](Elastic &e) { check(kiln_elastic_finish(e.get())); },
          "Records that the run has finished.");

  m.def(
      "compile",
      [](const TracedFunction &traced, unsigned optLevel,
         std::shared_ptr<Communicator> comm, std::vector<int> batchArgs,
         double bucketMb, bool overlap, int zeroStage,
         std::vector<std::pair<int, std::vector<int64_t>>> shardedArgs,
         std::vector<int> shardedResults, std::string autocast,
         std::vector<std::string> meshAxes, std::vector<int64_t> meshShape,
         std::vector<std::vector<std::string>> argumentShardings,
         std::vector<std::vector<std::string>> resultShardings,
         std::string bucketAxis, bool spmdTextOnly, bool profile,
         std::vector<int> donate, std::string device, std::string cudaArch,
         bool cudaTF32, bool cudaDeterministic, bool cudaAttention3xTF32,
         bool cudaCudnnAttention, bool cudaAttentionTuning) -> py::object {
        JitOptions options;
        options.device = std::move(device);
        options.cudaArch = std::move(cudaArch);
        options.cudaTF32 = cudaTF32;
        options.cudaDeterministic = cudaDeterministic;
        options.cudaAttention3xTF32 = cudaAttention3xTF32;
        options.cudaCudnnAttention = cudaCudnnAttention;
        options.cudaAttentionTuning = cudaAttentionTuning;
        options.donateArgs = std::move(donate);
        options.optLevel = optLevel;
        options.profile = profile;
        options.autocast = std::move(autocast);
        options.comm = comm ? comm->get() : nullptr;
        options.batchArgs = std::move(batchArgs);
        options.bucketMb = bucketMb;
        options.overlap = overlap;
        options.zeroStage = zeroStage;
        for (auto &[position, shape] : shardedArgs)
          options.shardedArgs.push_back({position, std::move(shape)});
        options.shardedResults = std::move(shardedResults);
        options.meshAxes = std::move(meshAxes);
        options.meshShape = std::move(meshShape);
        options.argumentShardings = std::move(argumentShardings);
        options.resultShardings = std::move(resultShardings);
        options.bucketAxis = std::move(bucketAxis);
        if (spmdTextOnly)
          return py::str(spmdText(traced, options));
        auto compiled =
            std::make_shared<CompiledFunction>(compile(traced, options));
        // Said here, in Python's terms, rather than by the first call.
        if (!comm && kiln_module_uses_collectives(compiled->module().get()))
          throw JitError("'" + traced.name() +
                         "' exchanges values between ranks "
                         "(kiln.distributed collectives); pass the "
                         "communicator: kiln.jit(f, comm=kiln.distributed."
                         "mpi())");
        return py::cast(compiled);
      },
      py::arg("traced"), py::arg("opt_level") = 2, py::arg("comm") = nullptr,
      py::arg("batch_args") = std::vector<int>(), py::arg("bucket_mb") = 25.0,
      py::arg("overlap") = true, py::arg("zero_stage") = 0,
      py::arg("sharded_args") =
          std::vector<std::pair<int, std::vector<int64_t>>>(),
      py::arg("sharded_results") = std::vector<int>(),
      py::arg("autocast") = std::string(),
      py::arg("mesh_axes") = std::vector<std::string>(),
      py::arg("mesh_shape") = std::vector<int64_t>(),
      py::arg("argument_shardings") = std::vector<std::vector<std::string>>(),
      py::arg("result_shardings") = std::vector<std::vector<std::string>>(),
      py::arg("bucket_axis") = std::string(), py::arg("spmd_text") = false,
      py::arg("profile") = false, py::arg("donate") = std::vector<int>(),
      py::arg("device") = std::string("cpu"),
      py::arg("cuda_arch") = std::string(), py::arg("cuda_tf32") = false,
      py::arg("cuda_deterministic") = false,
      py::arg("cuda_attention_3xtf32") = false,
      py::arg("cuda_cudnn_attention") = true,
      py::arg("cuda_attention_tuning") = true,
      "Compiles a traced function for device (\"cpu\" or \"cuda\", "
      "cuda_arch: \"sm_XX\" or \"\" for the device's; cuda_tf32, "
      "cuda_deterministic and cuda_attention_3xtf32 as kiln-compile's "
      "--cuda-* flags of those names, cuda_cudnn_attention and "
      "cuda_attention_tuning false as --no-cuda-cudnn-attention and "
      "--no-cuda-attention-tuning); donate lists the inputs "
      "whose buffers "
      "the outputs may be written into (JitOptions::donateArgs); with comm and "
      "batch_args (positions of "
      "the traced inputs), rewritten for data parallelism over comm's "
      "ranks, and with zero_stage for ZeRO: sharded_args are (position, "
      "whole shape) of the inputs passed as blocks, sharded_results the "
      "outputs returned as blocks, and autocast (\"bf16\", \"f16\" or \"\") "
      "the mixed-precision policy; with mesh_axes and mesh_shape, "
      "partitioned over comm's ranks as a device mesh, each traced input "
      "and output split as argument_shardings / result_shardings say (per "
      "dimension a mesh axis, \"\" for none; an empty list: whole), the "
      "all-reduces of bucket_axis bucketed (JitOptions in kiln/Jit.h). "
      "With spmd_text, returns instead the kiln IR of the program one rank "
      "runs, before compilation (kiln::spmdText). With profile, the module "
      "times its regions while the profiler is on (kiln.profiler).");

  py::class_<Dispatcher>(m, "Dispatcher")
      .def(py::init<py::object>())
      .def("__call__", &Dispatcher::call)
      .def("add", &Dispatcher::add)
      .def("__len__", &Dispatcher::size);
}

/// A tracer message with the C++ API's names as Python spells them:
/// `kiln::cast(x, kiln::DType::I64)` becomes `x.astype(numpy.int64)`,
/// other `kiln::f` become `kiln.f`.
static std::string pythonSpelling(std::string text) {
  static const std::regex castCall(R"(kiln::cast\((\w+), kiln::DType::(\w+)\))");
  static const std::regex dtypeName(R"(kiln::DType::(\w+))");
  // DType::I64 -> the element type spelled "i64" -> numpy's int64.
  auto numpyName = [](const std::string &name) -> std::string {
    std::string spelling = llvm::StringRef(name).lower();
    for (const ElementTypeInfo &info : kElementTypes) {
      if (spelling != info.name || !*info.npyDescriptor)
        continue;
      py::dtype dtype = DTypeTable::get().numpy(
          static_cast<kiln_dtype_t>(info.type));
      // numpy spells its bool scalar type bool_ (numpy.bool is Python's).
      return "numpy." + dtype.attr("name").cast<std::string>() +
             (info.elementClass == ElementClass::Bool ? "_" : "");
    }
    return name;
  };
  std::smatch match;
  while (std::regex_search(text, match, castCall))
    text.replace(match.position(0), match.length(0),
                 match[1].str() + ".astype(" + numpyName(match[2].str()) +
                     ")");
  while (std::regex_search(text, match, dtypeName))
    text.replace(match.position(0), match.length(0),
                 numpyName(match[1].str()));
  for (size_t at; (at = text.find("kiln::")) != std::string::npos;)
    text.replace(at, 6, "kiln.");
  return text;
}

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "kiln's C++ tracer and JIT, bound for the kiln package";
  static py::exception<TraceError> traceError(m, "TraceError");
  static py::exception<JitError> jitError(m, "JitError",
                                          PyExc_RuntimeError);
  py::register_exception<kiln::python::CommError>(m, "CommunicationError",
                                                  PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer)
        std::rethrow_exception(pointer);
    } catch (const TraceError &error) {
      traceError(pythonSpelling(error.what()).c_str());
    } catch (const JitError &error) {
      jitError(error.what());
    }
  });
  bindTracer(m);
  bindJit(m);
  bindOptim(m);
  bindRandom(m);
}
