"""Writes the node tests of the installed onnx release (its
onnx/backend/test/case/node/*.py, the cases upstream's
`backend-test-tools generate-data` writes into ONNX's source tree) as the
backend test data layout kiln-onnx-backend-tests reads:
OUT/node/<test>/model.onnx and test_data_set_*/{input,output}_*.pb.

    make_node_tests.py OUT [--require-version X.Y.Z]

The onnx wheel carries the cases' code but not their data. Needs onnx and
numpy (the benchmark virtualenv); exits 77 (ctest's SKIP) without them.
"""
import argparse
import sys
import warnings
from pathlib import Path

try:
    import onnx
    from onnx.backend.test import cmd_tools
    from onnx.backend.test.case import node
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--require-version",
                        help="exit 77 (skip) unless onnx is this release")
    args = parser.parse_args()
    if args.require_version and onnx.__version__ != args.require_version:
        print(f"SKIP: onnx {onnx.__version__} is installed; the expected "
              f"failures are those of onnx {args.require_version}")
        return 77
    stamp = args.out / f"onnx-{onnx.__version__}.stamp"
    if stamp.exists():
        print(f"{args.out}: the node tests of onnx {onnx.__version__} are there")
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node.collect_testcases()
        # Upstream's writer, on the node cases instead of the model ones.
        cmd_tools.model_test.collect_testcases = lambda: cases
        cmd_tools.generate_data(argparse.Namespace(output=str(args.out)))
    stamp.write_text(f"{len(cases)} node tests\n")
    print(f"{args.out}: {len(cases)} node tests of onnx {onnx.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
