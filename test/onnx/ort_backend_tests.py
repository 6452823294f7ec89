"""ONNX Runtime on ONNX's backend test data, compared as
kiln-onnx-backend-tests compares kiln (|actual - expected| <= 1e-7 +
1e-3 * |expected|, NaN equal to NaN, integers, bools and strings exactly):
the pass rate per directory that kiln's is measured against.

    ort_backend_tests.py DATA_DIR [--list-failures]

Needs onnxruntime, onnx and numpy (the benchmark virtualenv).
"""
import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

SUITES = ["node", "simple", "pytorch-converted", "pytorch-operator"]


def read(path, type_proto):
    data = path.read_bytes()
    if type_proto.HasField("sequence_type"):
        proto = onnx.SequenceProto()
        proto.ParseFromString(data)
        return numpy_helper.to_list(proto)
    if type_proto.HasField("optional_type"):
        proto = onnx.OptionalProto()
        proto.ParseFromString(data)
        return numpy_helper.to_optional(proto)
    proto = onnx.TensorProto()
    proto.ParseFromString(data)
    return numpy_helper.to_array(proto)


def close(got, want):
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            close(g, w) for g, w in zip(got, want))
    if want is None:
        return got is None
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "fc":
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        ok = np.abs(g - w) <= 1e-7 + 1e-3 * np.abs(w)
        return bool(np.all(ok | both_nan))
    return bool(np.array_equal(got, want))


def run_test(test_dir):
    model = onnx.load(str(test_dir / "model.onnx"))
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    inputs = [i for i in model.graph.input
              if i.name not in {t.name for t in model.graph.initializer}]
    for data_set in sorted(test_dir.glob("test_data_set_*")):
        feeds = {}
        for k, info in enumerate(inputs):
            path = data_set / f"input_{k}.pb"
            if path.exists():
                feeds[info.name] = read(path, info.type)
        outputs = session.run(None, feeds)
        for k, info in enumerate(model.graph.output):
            want = read(data_set / f"output_{k}.pb", info.type)
            if not close(outputs[k], want):
                raise AssertionError(f"output {k} differs")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--list-failures", action="store_true")
    args = parser.parse_args()
    total_pass = total = 0
    for suite in SUITES:
        folder = args.data / suite
        if not folder.is_dir():
            continue
        passed = count = 0
        for test_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            count += 1
            try:
                run_test(test_dir)
                passed += 1
            except Exception as e:  # any failure of ORT counts, as for kiln
                if args.list_failures:
                    print(f"{suite}/{test_dir.name}  {str(e).splitlines()[0][:160] if str(e) else type(e).__name__}")
        print(f"{suite:<18} {passed:>4} / {count:<4} passed ({100.0 * passed / max(count, 1):.1f}%)")
        total_pass += passed
        total += count
    print(f"onnxruntime {ort.__version__}: {total_pass} / {total} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
