//===- OptimBindings.cpp - kiln/Optim.h for kiln.optim --------------------===//
//
// Binds the optimizers of kiln/Optim.h (Sgd, Adam/AdamW, Adagrad,
// LossScaler) for the Python package's kiln.optim, which adds pytrees on top. The update formulas and
// the state layout stay in C++: Python asks for the state's specs and calls
// step() on flat lists of tensors.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "kiln/Optim.h"

#include <pybind11/stl.h>

using namespace kiln;
using namespace kiln::python;

void kiln::python::bindOptim(py::module_ &m) {
  using optim::Adagrad;
  using optim::Adam;
  using optim::Optimizer;
  using optim::Sgd;

  py::class_<Optimizer>(m, "Optimizer",
                        "An optimizer of kiln/Optim.h (abstract).")
      .def_property_readonly("slot_names", &Optimizer::slotNames,
                             "Names of the per-parameter state tensors.")
      .def_readwrite("lr", &Optimizer::lr)
      .def(
          "state_specs",
          [](const Optimizer &opt,
             const std::vector<std::pair<Shape, int>> &params) {
            std::vector<TensorSpec> specs;
            for (const auto &[shape, code] : params)
              specs.push_back({dtypeFromCode(code), shape, ""});
            py::list result;
            for (const TensorSpec &spec :
                 opt.stateSpecs(specs, callerLocation()))
              result.append(py::make_tuple(spec.name, spec.shape,
                                           static_cast<int>(spec.dtype)));
            return result;
          },
          "(name, shape, dtype code) of each state tensor for parameters "
          "given as (shape, dtype code); all start at zero.")
      .def(
          "step",
          [](const Optimizer &opt, py::handle params, py::handle grads,
             py::handle state, py::handle lr) {
            SourceLoc loc = callerLocation();
            optim::Update update =
                opt.step(toTensors(params, loc), toTensors(grads, loc),
                         toTensors(state, loc),
                         lr.is_none() ? Tensor() : toTensor(lr, loc), loc);
            return py::make_tuple(toList(update.params), toList(update.state));
          },
          "(new params, new state) as lists; records the update in the "
          "active trace.");

  py::class_<Sgd, Optimizer>(m, "Sgd")
      .def(py::init<double, double, double, double, bool, bool>(),
           py::arg("lr"), py::arg("momentum") = 0.0, py::arg("dampening") = 0.0,
           py::arg("weight_decay") = 0.0, py::arg("nesterov") = false,
           py::arg("maximize") = false)
      .def_readwrite("momentum", &Sgd::momentum)
      .def_readwrite("dampening", &Sgd::dampening)
      .def_readwrite("weight_decay", &Sgd::weightDecay)
      .def_readwrite("nesterov", &Sgd::nesterov)
      .def_readwrite("maximize", &Sgd::maximize);

  py::class_<Adam, Optimizer>(m, "Adam")
      .def(py::init<double, double, double, double, double, bool, bool, bool>(),
           py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("eps"),
           py::arg("weight_decay"), py::arg("amsgrad"), py::arg("decoupled"),
           py::arg("maximize"))
      .def_readwrite("beta1", &Adam::beta1)
      .def_readwrite("beta2", &Adam::beta2)
      .def_readwrite("eps", &Adam::eps)
      .def_readwrite("weight_decay", &Adam::weightDecay)
      .def_readwrite("amsgrad", &Adam::amsgrad)
      .def_readwrite("decoupled", &Adam::decoupled)
      .def_readwrite("maximize", &Adam::maximize);

  py::class_<Adagrad, Optimizer>(m, "Adagrad")
      .def(py::init<double, double, double, double, double, bool>(),
           py::arg("lr"), py::arg("lr_decay"), py::arg("weight_decay"),
           py::arg("initial_accumulator_value"), py::arg("eps"),
           py::arg("maximize"))
      .def_readwrite("lr_decay", &Adagrad::lrDecay)
      .def_readwrite("weight_decay", &Adagrad::weightDecay)
      .def_readwrite("initial_accumulator_value",
                     &Adagrad::initialAccumulatorValue)
      .def_readwrite("eps", &Adagrad::eps)
      .def_readwrite("maximize", &Adagrad::maximize);

  using optim::LossScaler;
  py::class_<LossScaler>(m, "LossScaler",
                         "Dynamic loss scaling of kiln/Optim.h.")
      .def(py::init<double, double, double, int64_t>(), py::arg("init_scale"),
           py::arg("growth_factor"), py::arg("backoff_factor"),
           py::arg("growth_interval"))
      .def_readonly("init_scale", &LossScaler::initScale)
      .def(
          "check",
          [](const LossScaler &scaler) {
            scaler.stateSpecs(callerLocation());
          },
          "Raises for out-of-range hyper-parameters.")
      .def(
          "scale",
          [](const LossScaler &scaler, py::handle loss, py::handle state) {
            SourceLoc loc = callerLocation();
            py::list scaled = toList(
                {scaler.scale(toTensor(loss, loc), toTensors(state, loc), loc)});
            return py::object(scaled[0]);
          },
          "The loss times the state's scale, in the active trace.")
      .def(
          "step",
          [](const LossScaler &scaler, const Optimizer &opt, py::handle params,
             py::handle grads, py::handle state, py::handle scalerState,
             py::handle lr) {
            SourceLoc loc = callerLocation();
            optim::ScaledUpdate update = scaler.step(
                opt, toTensors(params, loc), toTensors(grads, loc),
                toTensors(state, loc), toTensors(scalerState, loc),
                lr.is_none() ? Tensor() : toTensor(lr, loc), loc);
            py::list skipped = toList({update.skipped});
            return py::make_tuple(toList(update.params), toList(update.state),
                                  toList(update.scalerState),
                                  py::object(skipped[0]));
          },
          "(new params, new optimizer state, new scaler state, skipped) for "
          "the gradients of the scaled loss; records the step in the active "
          "trace.");
}
