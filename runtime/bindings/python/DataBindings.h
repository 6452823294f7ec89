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
#include "kiln/FeatureHash.h"
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
  // An object array filled in place with new bytes objects (no list in
  // between): strings are most of a Criteo batch's conversion. numpy makes
  // it (pybind11 2.10 reads numpy 1's dtype layout, wrong under numpy 2).
  py::array array = py::module_::import("numpy").attr("empty")(
      py::tuple(py::cast(dims)), py::arg("dtype") = "object");
  auto **slots = static_cast<PyObject **>(array.mutable_data());
  for (size_t i = 0; i < values.bytes.size(); ++i) {
    PyObject *item = PyBytes_FromStringAndSize(values.bytes[i].data(),
                                               values.bytes[i].size());
    if (!item)
      throw py::error_already_set();
    Py_XDECREF(slots[i]); // numpy fills a new object array with None
    slots[i] = item;
  }
  return array;
}

/// A parser and which of its spec's features are variable-length.
struct ExampleSpecParser {
  kiln::data::ExampleParser parser;
  std::vector<bool> ragged;
};

/// The same for SequenceExamples, of the context's features.
struct SequenceSpecParser {
  kiln::data::SequenceExampleParser parser;
  std::vector<bool> ragged;
};

/// Python's default values, of the spec's type, into the spec's vectors.
inline void castDefaults(pybind11::handle values, kiln::data::FeatureType type,
                         std::vector<int64_t> &ints, std::vector<float> &floats,
                         std::vector<std::string> &bytes) {
  switch (type) {
  case kiln::data::FeatureType::Int64:
    ints = values.cast<std::vector<int64_t>>();
    break;
  case kiln::data::FeatureType::Float:
    floats = values.cast<std::vector<float>>();
    break;
  case kiln::data::FeatureType::Bytes:
    for (pybind11::handle value : values)
      bytes.push_back(value.cast<std::string>());
    break;
  }
}

/// A FeatureSpec from (name, type, variable_length, shape, default).
inline kiln::data::FeatureSpec featureSpecOf(const pybind11::tuple &entry) {
  kiln::data::FeatureSpec feature;
  feature.name = entry[0].cast<std::string>();
  feature.type = featureTypeNamed(entry[1].cast<std::string>());
  feature.variableLength = entry[2].cast<bool>();
  feature.shape = entry[3].cast<std::vector<int64_t>>();
  if (!entry[4].is_none())
    castDefaults(entry[4], feature.type, feature.defaultInts,
                 feature.defaultFloats, feature.defaultBytes);
  return feature;
}

/// A [rows, columns] int64 array of `values`.
inline pybind11::array_t<int64_t> int64Array(const std::vector<int64_t> &values,
                                             std::vector<pybind11::ssize_t> shape) {
  pybind11::array_t<int64_t> array(shape);
  std::copy(values.begin(), values.end(), array.mutable_data());
  return array;
}

/// (values, row lengths or None) per feature of a parsed batch.
inline pybind11::list parsedFeatures(
    const std::vector<kiln::data::FeatureValues> &features,
    const std::vector<bool> &ragged) {
  pybind11::list out;
  for (size_t f = 0; f < features.size(); ++f) {
    const kiln::data::FeatureValues &values = features[f];
    pybind11::object lengths = pybind11::none();
    if (ragged[f])
      lengths = int64Array(values.rowLengths,
                           {static_cast<pybind11::ssize_t>(values.rowLengths.size())});
    out.append(pybind11::make_tuple(valuesArray(values, values.shape), lengths));
  }
  return out;
}

/// A one-dimensional array of `count` elements, made with a shape:
/// pybind11 2.10's one-argument array_t(count) fills it wrongly under
/// numpy 2.
template <typename T> pybind11::array_t<T> vectorArray(size_t count) {
  return pybind11::array_t<T>(
      std::vector<pybind11::ssize_t>{static_cast<pybind11::ssize_t>(count)});
}

/// The bytes of each item of a list or object array (str as UTF-8).
inline std::vector<std::string> bytesOf(pybind11::handle values) {
  std::vector<std::string> out;
  for (pybind11::handle value : values)
    out.push_back(pybind11::isinstance<pybind11::str>(value)
                      ? value.cast<std::string>()
                      : std::string(value.cast<pybind11::bytes>()));
  return out;
}

/// `fn` of each string of `values` (bytesOf's), as a [n] array of T.
template <typename T, typename Fn>
pybind11::array_t<T> mapStrings(pybind11::handle values, Fn fn) {
  std::vector<std::string> items = bytesOf(values);
  auto out = vectorArray<T>(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    out.mutable_data()[i] = fn(items[i]);
  return out;
}

/// Defines the categorical features' functions (kiln/FeatureHash.h).
inline void bindFeatureHash(pybind11::module_ &m) {
  namespace py = pybind11;
  using kiln::data::Vocabulary;
  m.def(
      "fingerprint64",
      [](py::handle values) {
        return mapStrings<uint64_t>(values, [](const std::string &item) {
          return kiln::data::fingerprint64(item);
        });
      },
      py::arg("values"));
  m.def(
      "hash_bucket_bytes",
      [](py::handle values, int64_t buckets) {
        if (buckets < 1)
          throw py::value_error("the number of hash buckets must be at least 1");
        return mapStrings<int64_t>(values, [&](const std::string &item) {
          return kiln::data::hashBucket(std::string_view(item), buckets);
        });
      },
      py::arg("values"), py::arg("num_buckets"));
  m.def(
      "hash_bucket_ints",
      [](py::array_t<int64_t, py::array::c_style | py::array::forcecast> values,
         int64_t buckets) {
        if (buckets < 1)
          throw py::value_error("the number of hash buckets must be at least 1");
        auto out = vectorArray<int64_t>(values.size());
        for (py::ssize_t i = 0; i < values.size(); ++i)
          out.mutable_data()[i] = kiln::data::hashBucket(values.data()[i], buckets);
        return out;
      },
      py::arg("values"), py::arg("num_buckets"));
  m.def(
      "cross_hashed",
      [](const std::vector<py::array_t<uint64_t, py::array::c_style |
                                                      py::array::forcecast>>
             &hashes,
         const std::vector<py::array_t<int64_t, py::array::c_style |
                                                    py::array::forcecast>>
             &lengths,
         int64_t buckets, uint64_t hashKey) {
        if (lengths.size() != hashes.size())
          throw py::value_error("cross_hashed takes one row-length array per "
                                "column");
        py::ssize_t rows = lengths.empty() ? 0 : lengths[0].size();
        std::vector<kiln::data::CrossedColumn> columns;
        for (size_t c = 0; c < hashes.size(); ++c) {
          if (lengths[c].size() != rows)
            throw py::value_error("the crossed columns have different batch sizes");
          columns.push_back({hashes[c].data(), hashes[c].size(), lengths[c].data()});
        }
        std::vector<int64_t> ids, rowLengths;
        std::string error;
        if (!kiln::data::crossHashedRows(columns, rows, buckets, hashKey, ids,
                                         rowLengths, error))
          throw py::value_error(error);
        return py::make_tuple(
            int64Array(ids, {static_cast<py::ssize_t>(ids.size())}),
            int64Array(rowLengths, {rows}));
      },
      py::arg("hashes"), py::arg("row_lengths"), py::arg("num_buckets"),
      py::arg("hash_key"));
  py::class_<Vocabulary>(m, "Vocabulary")
      .def(py::init([](py::object tokens, py::object path, int64_t size,
                       int64_t oovBuckets, int64_t defaultValue) {
             auto vocabulary = std::make_unique<Vocabulary>();
             std::string error;
             bool ok = path.is_none()
                           ? vocabulary->assign(bytesOf(tokens), oovBuckets,
                                                defaultValue, error)
                           : vocabulary->load(path.cast<std::string>(), size,
                                              oovBuckets, defaultValue, error);
             if (!ok) {
               PyErr_SetString(error.find("cannot open") != std::string::npos
                                   ? PyExc_OSError
                                   : PyExc_ValueError,
                               error.c_str());
               throw py::error_already_set();
             }
             return vocabulary;
           }),
           py::arg("tokens"), py::arg("path"), py::arg("size"),
           py::arg("num_oov_buckets"), py::arg("default_value"))
      .def("lookup",
           [](const Vocabulary &vocabulary, py::handle values) {
             return mapStrings<int64_t>(values, [&](const std::string &item) {
               return vocabulary.lookup(item);
             });
           })
      .def_property_readonly("id_count", &Vocabulary::idCount);
}

/// Defines TFRecordReader, TFRecordWriter, RecordDataset, ExampleParser,
/// SequenceExampleParser and CriteoDataset in `m`.
inline void bindData(pybind11::module_ &m) {
  namespace py = pybind11;
  bindFeatureHash(m);
  py::class_<kiln::data::CriteoDataset>(m, "CriteoDataset")
      .def(py::init([](std::vector<std::string> files, int64_t batchSize,
                       int64_t rank, int64_t ranks, int64_t prefetch) {
             // A file that cannot be opened is an OSError, as open() of a
             // CriteoReader says it; the other mistakes ValueErrors.
             for (const std::string &path : files) {
               kiln::data::CriteoReader probe;
               std::string error;
               if (!probe.open(path, error)) {
                 PyErr_SetString(PyExc_OSError, error.c_str());
                 throw py::error_already_set();
               }
             }
             kiln::data::CriteoOptions options;
             options.files = std::move(files);
             options.batchSize = batchSize;
             options.rank = rank;
             options.ranks = ranks;
             options.prefetch = prefetch;
             auto dataset = std::make_unique<kiln::data::CriteoDataset>();
             std::string error;
             if (!dataset->open(std::move(options), error))
               throw py::value_error(error);
             return dataset;
           }),
           py::arg("files"), py::arg("batch_size"), py::arg("rank") = 0,
           py::arg("ranks") = 1, py::arg("prefetch") = 2,
           "Criteo logs read file after file, this rank's examples, "
           "`prefetch` batches parsed ahead on a background thread.")
      .def(
          "next",
          [](kiln::data::CriteoDataset &dataset) -> py::object {
            kiln::data::CriteoBatch batch;
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
            py::ssize_t rows = batch.size();
            return py::make_tuple(
                int64Array(batch.labels, {rows}),
                int64Array(batch.dense, {rows, kiln::data::CriteoBatch::kDense}),
                int64Array(batch.sparse,
                           {rows, kiln::data::CriteoBatch::kSparse}));
          },
          "(labels [n], dense [n, 13], sparse [n, 26]) int64 arrays of the "
          "next batch, or None at the end.");

  py::class_<kiln::data::RecordDataset>(m, "RecordDataset")
      .def(py::init([](std::vector<std::string> files,
                       const std::string &compression, int64_t batchSize,
                       bool dropRemainder, int64_t shuffleBuffer,
                       uint64_t seed, int64_t rank, int64_t ranks,
                       int64_t prefetch, bool skipDamaged) {
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
             options.skipDamaged = skipDamaged;
             auto dataset = std::make_unique<kiln::data::RecordDataset>();
             std::string error;
             if (!dataset->open(std::move(options), error))
               throw py::value_error(error);
             return dataset;
           }),
           py::arg("files"), py::arg("compression"), py::arg("batch_size"),
           py::arg("drop_remainder"), py::arg("shuffle_buffer"),
           py::arg("seed"), py::arg("rank"), py::arg("ranks"),
           py::arg("prefetch"), py::arg("skip_damaged") = false)
      .def(
          "skipped",
          [](const kiln::data::RecordDataset &dataset) {
            kiln::data::SkippedRecords skipped = dataset.skipped();
            return py::make_tuple(skipped.count, skipped.last);
          },
          "(count, last message) of the damaged records skipped so far.")
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
               spec.push_back(featureSpecOf(item.cast<py::tuple>()));
               parser->ragged.push_back(spec.back().variableLength);
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
            return parsedFeatures(features, self.ragged);
          },
          py::arg("records"),
          "(values, row_lengths) per feature of the spec, in its order: "
          "[batch, shape...] and None for a fixed-length feature, the "
          "concatenated values and each record's count for a "
          "variable-length one.");

  py::class_<SequenceSpecParser>(m, "SequenceExampleParser")
      .def(py::init([](py::list context, py::list sequence) {
             auto parser = std::make_unique<SequenceSpecParser>();
             std::vector<kiln::data::FeatureSpec> contextSpec;
             for (py::handle item : context) {
               contextSpec.push_back(featureSpecOf(item.cast<py::tuple>()));
               parser->ragged.push_back(contextSpec.back().variableLength);
             }
             // Each entry: (name, type, variable_length, shape,
             // allow_missing, padding value or None).
             std::vector<kiln::data::SequenceFeatureSpec> sequenceSpec;
             for (py::handle item : sequence) {
               auto entry = item.cast<py::tuple>();
               kiln::data::SequenceFeatureSpec list;
               list.name = entry[0].cast<std::string>();
               list.type = featureTypeNamed(entry[1].cast<std::string>());
               list.variableLength = entry[2].cast<bool>();
               list.shape = entry[3].cast<std::vector<int64_t>>();
               list.allowMissing = entry[4].cast<bool>();
               if (!entry[5].is_none())
                 castDefaults(entry[5], list.type, list.defaultInts,
                              list.defaultFloats, list.defaultBytes);
               sequenceSpec.push_back(std::move(list));
             }
             std::string error;
             if (!parser->parser.setSpec(std::move(contextSpec),
                                         std::move(sequenceSpec), error))
               throw py::value_error(error);
             return parser;
           }),
           py::arg("context"), py::arg("sequence"))
      .def(
          "parse",
          [](const SequenceSpecParser &self,
             const std::vector<std::string> &records) {
            std::vector<kiln::data::FeatureValues> context;
            std::vector<kiln::data::SequenceValues> sequence;
            std::string error;
            bool ok;
            {
              py::gil_scoped_release release;
              ok = self.parser.parse(records, context, sequence, error);
            }
            if (!ok)
              throw py::value_error(error);
            py::list lists;
            for (const kiln::data::SequenceValues &list : sequence) {
              py::object valueCounts = py::none();
              if (list.values.shape.size() == 1) // variable length
                valueCounts = int64Array(
                    list.valueCounts,
                    {static_cast<py::ssize_t>(list.valueCounts.size())});
              lists.append(py::make_tuple(
                  valuesArray(list.values, list.values.shape),
                  int64Array(list.stepCounts,
                             {static_cast<py::ssize_t>(list.stepCounts.size())}),
                  valueCounts));
            }
            return py::make_tuple(parsedFeatures(context, self.ragged), lists);
          },
          py::arg("records"),
          "(context, feature lists): the context as ExampleParser.parse "
          "gives it, and per feature list (values, steps per record, "
          "values per step or None): [batch, longest, shape...] padded for "
          "a fixed-length list, the concatenated values for a "
          "variable-length one.");
}

} // namespace kiln::python

#endif // KILN_PYTHON_DATABINDINGS_H
