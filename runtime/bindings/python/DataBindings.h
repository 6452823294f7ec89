//===- DataBindings.h - TFRecord files and tf.Example for Python -*- C++ -*-===//
//
// kiln/TfRecord.h and kiln/Example.h as the extension's classes, which
// kiln_runtime.data wraps: a reader yielding each record as bytes, a
// writer, and a parser of batches of tf.Example records into numpy arrays.
// Failures raise ValueError (damage, a record against the spec) or OSError
// (a file that cannot be opened) with the library's message.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PYTHON_DATABINDINGS_H
#define KILN_PYTHON_DATABINDINGS_H

#include "kiln/Criteo.h"
#include "kiln/Dataset.h"
#include "kiln/Example.h"
#include "kiln/TfRecord.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln::python {

inline kiln::data::Compression compressionNamed(const std::string &name,
                                                const std::string &path) {
  if (name == "auto")
    return kiln::data::compressionForPath(path);
  if (name == "" || name == "none")
    return kiln::data::Compression::None;
  if (name == "gzip" || name == "GZIP")
    return kiln::data::Compression::Gzip;
  if (name == "zlib" || name == "ZLIB")
    return kiln::data::Compression::Zlib;
  throw pybind11::value_error("unknown compression '" + name +
                              "' (none, gzip, zlib or auto)");
}

inline kiln::data::FeatureType featureTypeNamed(const std::string &name) {
  if (name == "int64")
    return kiln::data::FeatureType::Int64;
  if (name == "float32" || name == "float")
    return kiln::data::FeatureType::Float;
  if (name == "bytes")
    return kiln::data::FeatureType::Bytes;
  throw pybind11::value_error("unknown feature type '" + name +
                              "' (int64, float32 or bytes)");
}

/// A feature's values as a numpy array of `shape` (int64, float32, or an
/// object array of bytes).
inline pybind11::array valuesArray(const kiln::data::FeatureValues &values,
                                   const std::vector<int64_t> &shape) {
  namespace py = pybind11;
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  switch (values.type) {
  case kiln::data::FeatureType::Int64: {
    py::array_t<int64_t> array(dims);
    std::copy(values.ints.begin(), values.ints.end(), array.mutable_data());
    return std::move(array);
  }
  case kiln::data::FeatureType::Float: {
    py::array_t<float> array(dims);
    std::copy(values.floats.begin(), values.floats.end(),
              array.mutable_data());
    return std::move(array);
  }
  case kiln::data::FeatureType::Bytes:
    break;
  }
  py::list items;
  for (const std::string &value : values.bytes)
    items.append(py::bytes(value));
  py::array array = py::module_::import("numpy").attr("array")(
      items, py::arg("dtype") = "object");
  return array.attr("reshape")(py::tuple(py::cast(dims)));
}

/// A parser and which of its spec's features are variable-length.
struct ExampleSpecParser {
  kiln::data::ExampleParser parser;
  std::vector<bool> ragged;
};

/// A [rows, columns] int64 array of `values`.
inline pybind11::array_t<int64_t> int64Array(const std::vector<int64_t> &values,
                                             std::vector<pybind11::ssize_t> shape) {
  pybind11::array_t<int64_t> array(shape);
  std::copy(values.begin(), values.end(), array.mutable_data());
  return array;
}

/// Defines TFRecordReader, TFRecordWriter, RecordDataset, ExampleParser
/// and CriteoReader in `m`.
inline void bindData(pybind11::module_ &m) {
  namespace py = pybind11;
  py::class_<kiln::data::CriteoReader>(m, "CriteoReader")
      .def(py::init([](const std::string &path) {
             auto reader = std::make_unique<kiln::data::CriteoReader>();
             std::string error;
             if (!reader->open(path, error)) {
               PyErr_SetString(PyExc_OSError, error.c_str());
               throw py::error_already_set();
             }
             return reader;
           }),
           py::arg("path"))
      .def(
          "next",
          [](kiln::data::CriteoReader &reader, int64_t size) -> py::object {
            if (size < 1)
              throw py::value_error("the batch size must be at least 1");
            kiln::data::CriteoBatch batch;
            std::string error;
            bool more;
            {
              py::gil_scoped_release release;
              more = reader.next(size, batch, error);
            }
            if (!more) {
              if (!error.empty())
                throw py::value_error(error);
              return py::none();
            }
            py::ssize_t rows = batch.size();
            return py::make_tuple(
                int64Array(batch.labels, {rows}),
                int64Array(batch.dense, {rows, kiln::data::CriteoBatch::kDense}),
                int64Array(batch.sparse,
                           {rows, kiln::data::CriteoBatch::kSparse}));
          },
          py::arg("size"),
          "(labels [n], dense [n, 13], sparse [n, 26]) int64 arrays of the "
          "next n <= size lines, or None at the end.");

  py::class_<kiln::data::RecordDataset>(m, "RecordDataset")
      .def(py::init([](std::vector<std::string> files,
                       const std::string &compression, int64_t batchSize,
                       bool dropRemainder, int64_t shuffleBuffer,
                       uint64_t seed, int64_t rank, int64_t ranks,
                       int64_t prefetch) {
             kiln::data::DatasetOptions options;
             options.files = std::move(files);
             options.compressionFromName = compression == "auto";
             if (!options.compressionFromName)
               options.compression = compressionNamed(compression, "");
             options.batchSize = batchSize;
             options.dropRemainder = dropRemainder;
             options.shuffleBuffer = shuffleBuffer;
             options.seed = seed;
             options.rank = rank;
             options.ranks = ranks;
             options.prefetch = prefetch;
             auto dataset = std::make_unique<kiln::data::RecordDataset>();
             std::string error;
             if (!dataset->open(std::move(options), error))
               throw py::value_error(error);
             return dataset;
           }),
           py::arg("files"), py::arg("compression"), py::arg("batch_size"),
           py::arg("drop_remainder"), py::arg("shuffle_buffer"),
           py::arg("seed"), py::arg("rank"), py::arg("ranks"),
           py::arg("prefetch"))
      .def(
          "next",
          [](kiln::data::RecordDataset &dataset) -> py::object {
            std::vector<std::string> batch;
            std::string error;
            bool more;
            {
              py::gil_scoped_release release;
              more = dataset.next(batch, error);
            }
            if (!more) {
              if (!error.empty())
                throw py::value_error(error);
              return py::none();
            }
            py::list records;
            for (const std::string &record : batch)
              records.append(py::bytes(record));
            return std::move(records);
          },
          "The next batch as a list of bytes, or None at the end.");

  using kiln::data::TfRecordReader;
  using kiln::data::TfRecordWriter;

  py::class_<TfRecordReader>(m, "TFRecordReader")
      .def(py::init([](const std::string &path, const std::string &compression) {
             auto reader = std::make_unique<TfRecordReader>();
             std::string error;
             if (!reader->open(path, compressionNamed(compression, path),
                               error)) {
               PyErr_SetString(PyExc_OSError, error.c_str());
               throw py::error_already_set();
             }
             return reader;
           }),
           py::arg("path"), py::arg("compression") = "auto")
      .def("next",
           [](TfRecordReader &reader) -> py::object {
             std::string record, error;
             if (reader.next(record, error))
               return py::bytes(record);
             if (!error.empty())
               throw py::value_error(error);
             return py::none();
           },
           "The next record as bytes, or None at the end.")
      .def_property_readonly("records_read", &TfRecordReader::recordsRead);

  py::class_<TfRecordWriter>(m, "TFRecordWriter")
      .def(py::init([](const std::string &path, const std::string &compression) {
             auto writer = std::make_unique<TfRecordWriter>();
             std::string error;
             if (!writer->open(path, compressionNamed(compression, path),
                               error)) {
               PyErr_SetString(PyExc_OSError, error.c_str());
               throw py::error_already_set();
             }
             return writer;
           }),
           py::arg("path"), py::arg("compression") = "auto")
      .def("write",
           [](TfRecordWriter &writer, py::bytes record) {
             std::string error;
             if (!writer.write(std::string(record), error))
               throw py::value_error(error);
           })
      .def("close", [](TfRecordWriter &writer) {
        std::string error;
        if (!writer.close(error))
          throw py::value_error(error);
      });

  py::class_<ExampleSpecParser>(m, "ExampleParser")
      .def(py::init([](py::list features) {
             // Each entry: (name, type, variable_length, shape, default).
             std::vector<kiln::data::FeatureSpec> spec;
             auto parser = std::make_unique<ExampleSpecParser>();
             for (py::handle item : features) {
               auto entry = item.cast<py::tuple>();
               kiln::data::FeatureSpec feature;
               feature.name = entry[0].cast<std::string>();
               feature.type = featureTypeNamed(entry[1].cast<std::string>());
               feature.variableLength = entry[2].cast<bool>();
               feature.shape = entry[3].cast<std::vector<int64_t>>();
               if (!entry[4].is_none()) {
                 switch (feature.type) {
                 case kiln::data::FeatureType::Int64:
                   feature.defaultInts = entry[4].cast<std::vector<int64_t>>();
                   break;
                 case kiln::data::FeatureType::Float:
                   feature.defaultFloats = entry[4].cast<std::vector<float>>();
                   break;
                 case kiln::data::FeatureType::Bytes:
                   for (py::handle value : entry[4])
                     feature.defaultBytes.push_back(value.cast<std::string>());
                   break;
                 }
               }
               parser->ragged.push_back(feature.variableLength);
               spec.push_back(std::move(feature));
             }
             std::string error;
             if (!parser->parser.setSpec(std::move(spec), error))
               throw py::value_error(error);
             return parser;
           }),
           py::arg("features"))
      .def(
          "parse",
          [](const ExampleSpecParser &self,
             const std::vector<std::string> &records) {
            std::vector<kiln::data::FeatureValues> features;
            std::string error;
            bool ok;
            {
              py::gil_scoped_release release;
              ok = self.parser.parse(records, features, error);
            }
            if (!ok)
              throw py::value_error(error);
            py::list out;
            for (size_t f = 0; f < features.size(); ++f) {
              const kiln::data::FeatureValues &values = features[f];
              py::object lengths = py::none();
              if (self.ragged[f]) {
                py::array_t<int64_t> array(std::vector<py::ssize_t>{
                    static_cast<py::ssize_t>(values.rowLengths.size())});
                std::copy(values.rowLengths.begin(), values.rowLengths.end(),
                          array.mutable_data());
                lengths = std::move(array);
              }
              out.append(py::make_tuple(valuesArray(values, values.shape),
                                        lengths));
            }
            return out;
          },
          py::arg("records"),
          "(values, row_lengths) per feature of the spec, in its order: "
          "[batch, shape...] and None for a fixed-length feature, the "
          "concatenated values and each record's count for a "
          "variable-length one.");
}

} // namespace kiln::python

#endif // KILN_PYTHON_DATABINDINGS_H
