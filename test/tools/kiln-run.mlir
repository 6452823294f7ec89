// kiln-run: calling compiled functions with literal and .npy inputs,
// printing and saving outputs, timing, listing, and the errors for bad
// command lines, inputs and modules. Expected values are worked out by hand
// from the programs below.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: kiln-compile %t/prog.mlir -o %t/prog.kmod
//
// --list: the target, then each function's signature with the names from
// kiln.name attributes, or argN / outN.
// RUN: kiln-run %t/prog.kmod --list | FileCheck %s --check-prefix=LIST
// LIST: target: cpu-x86_64
// LIST-NEXT: affine(a: f32[], x: f32[4]) -> (y: f32[4], total: f64[])
// LIST-NEXT: make(arg0: i32[]) -> (v: f32[4], grid: i64[2,3], out2: i1[3])
// LIST-NEXT: scalars(arg0: i1[], arg1: i32[], arg2: i64[], arg3: f64[]) -> (out0: i1[], out1: i32[], out2: i64[], out3: f64[])
// LIST-EMPTY:
//
// Literal inputs for rank-0 inputs of every dtype:
// !true = false, select(true, -5, 5) = -5, 9e9 * 2, 0.25 / 2.
// RUN: kiln-run %t/prog.kmod --function scalars --input true --input -5 --input 9000000000 --input 0.25 \
// RUN:   | FileCheck %s --check-prefix=SCALARS
// SCALARS: out0: i1[] = false
// SCALARS-NEXT: out1: i32[] = -5
// SCALARS-NEXT: out2: i64[] = 18000000000
// SCALARS-NEXT: out3: f64[] = 0.125
// RUN: kiln-run %t/prog.kmod --function=scalars --input=0 --input=7 --input=-1 --input=-3 \
// RUN:   | FileCheck %s --check-prefix=SCALARS2
// SCALARS2: out0: i1[] = true
// SCALARS2-NEXT: out1: i32[] = -7
// SCALARS2-NEXT: out2: i64[] = -2
// SCALARS2-NEXT: out3: f64[] = -1.5
//
// Printed outputs: v = 3 * [0, 1, 2, 3], grid = 10 * row + column,
// mask = [0, 1, 2] >= 1.
// RUN: kiln-run %t/prog.kmod --function make --input 3 | FileCheck %s --check-prefix=MAKE
// MAKE: v: f32[4] = [0, 3, 6, 9]
// MAKE-NEXT: grid: i64[2,3] = {{\[}}[0, 1, 2], [10, 11, 12]]
// MAKE-NEXT: out2: i1[3] = [false, true, true]
//
// --output-dir saves one .npy per output, named after the output.
// RUN: kiln-run %t/prog.kmod --function make --input 3 --output-dir %t/out \
// RUN:   | FileCheck %s --check-prefix=SAVED -DDIR=%t/out
// SAVED: v: f32[4] saved to [[DIR]]/v.npy
// SAVED-NEXT: grid: i64[2,3] saved to [[DIR]]/grid.npy
// SAVED-NEXT: out2: i1[3] saved to [[DIR]]/out2.npy
// RUN: %python %t/npy.py dump %t/out/v.npy %t/out/grid.npy %t/out/out2.npy \
// RUN:   | FileCheck %s --check-prefix=DUMP
// DUMP: <f4 (4,) [0.0, 3.0, 6.0, 9.0]
// DUMP-NEXT: <i8 (2, 3) [0, 1, 2, 10, 11, 12]
// DUMP-NEXT: |b1 (3,) [False, True, True]
//
// A saved output is a valid input: y = 2 * v + 1 = [1, 7, 13, 19], and
// the f64 total is 40.
// RUN: kiln-run %t/prog.kmod --function affine --input 2 --input %t/out/v.npy \
// RUN:   | FileCheck %s --check-prefix=AFFINE
// AFFINE: y: f32[4] = [1, 7, 13, 19]
// AFFINE-NEXT: total: f64[] = 40
//
// An .npy written independently: y = -2 * [0.5, -1, 2, 4] + 1, total -7.
// A rank-0 input can be an .npy too (shape ()).
// RUN: %python %t/npy.py write %t/x.npy '<f4' 4 0.5 -1 2 4
// RUN: %python %t/npy.py write %t/a.npy '<f4' '' -2
// RUN: kiln-run %t/prog.kmod --function affine --input %t/a.npy --input %t/x.npy \
// RUN:   | FileCheck %s --check-prefix=NPY
// NPY: y: f32[4] = [0, 3, -3, -7]
// NPY-NEXT: total: f64[] = -7
//
// --repeat N prints the outputs of the last of N more calls, then their
// timing.
// RUN: kiln-run %t/prog.kmod --function affine --input 2 --input %t/x.npy --repeat 3 \
// RUN:   | FileCheck %s --check-prefix=REPEAT
// REPEAT: y: f32[4] = [2, -1, 5, 9]
// REPEAT-NEXT: total: f64[] = 15
// REPEAT-NEXT: time per call: median {{[0-9]+\.[0-9]+}} us (min {{[0-9]+\.[0-9]+}} us, 3 runs)
//
// A module with a single function needs no --function.
// RUN: kiln-compile %t/single.mlir -o %t/single.kmod
// RUN: kiln-run %t/single.kmod --input 1.5 | FileCheck %s --check-prefix=SINGLE
// SINGLE: out0: f32[] = 3
//
// Errors: the command line.
// RUN: not kiln-run %t/prog.kmod --input 1 2>&1 | FileCheck %s --check-prefix=CHOOSE
// CHOOSE: kiln-run: error: the module has 3 functions; choose one with --function (affine, make, scalars)
// RUN: not kiln-run %t/prog.kmod --function nope 2>&1 | FileCheck %s --check-prefix=NOFUNC
// NOFUNC: kiln-run: error: the module has no function named 'nope' (it has: affine, make, scalars)
// RUN: not kiln-run %t/prog.kmod --function affine --input 2 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: kiln-run: error: function 'affine' takes 2 inputs but 1 --input was given
// RUN: not kiln-run %t/prog.kmod --function affine --input 2 --input %t/x.npy --input 3 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COUNT3
// COUNT3: kiln-run: error: function 'affine' takes 2 inputs but 3 --input were given
// RUN: not kiln-run %t/prog.kmod --bogus 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: kiln-run: error: unknown option '--bogus'
// RUN: not kiln-run %t/prog.kmod --function affine --repeat 0 2>&1 | FileCheck %s --check-prefix=REPEAT0
// REPEAT0: kiln-run: error: --repeat needs a positive integer, not '0'
// RUN: not kiln-run %t/prog.kmod --function affine --device-resident 2>&1 | FileCheck %s --check-prefix=RESIDENT
// RESIDENT: kiln-run: error: --device-resident times the calls of --repeat; give --repeat N
// RUN: not kiln-run %t/prog.kmod --function affine --input 2 --input %t/x.npy --repeat 2 --device-resident 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RESIDENT-CPU
// RESIDENT-CPU: kiln-run: error: --device-resident keeps tensors in CUDA device memory, but '{{.*}}prog.kmod' was compiled for cpu (kiln-compile --target=cuda)
// RUN: not kiln-run 2>&1 | FileCheck %s --check-prefix=NOMODULE
// NOMODULE: kiln-run: error: no module given
//
// Errors: inputs. Wrong shape, wrong dtype, missing file, a literal for a
// tensor input, literals that do not fit the dtype.
// RUN: %python %t/npy.py write %t/x3.npy '<f4' 3 1 2 3
// RUN: not kiln-run %t/prog.kmod --function affine --input 2 --input %t/x3.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE
// SHAPE: kiln-run: error: function 'affine': input 1 ('x'): '{{.*}}x3.npy' has shape [3] but the input expects [4]
// RUN: not kiln-run %t/prog.kmod --function affine --input %t/x.npy --input %t/x.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE0
// SHAPE0: kiln-run: error: function 'affine': input 0 ('a'): '{{.*}}x.npy' has shape [4] but the input expects []
// RUN: %python %t/npy.py write %t/xi.npy '<i8' 4 1 2 3 4
// RUN: not kiln-run %t/prog.kmod --function affine --input 2 --input %t/xi.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DTYPE
// DTYPE: kiln-run: error: function 'affine': input 1 ('x'): '{{.*}}xi.npy' holds <i8 data but the input is f32 (expected <f4)
// RUN: not kiln-run %t/prog.kmod --function affine --input 2 --input %t/missing.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOFILE
// NOFILE: kiln-run: error: function 'affine': input 1 ('x'): cannot open '{{.*}}missing.npy': No such file or directory
// RUN: not kiln-run %t/prog.kmod --function affine --input 2 --input 3 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LITERAL
// LITERAL: kiln-run: error: function 'affine': input 1 ('x') is f32[4]; a literal ('3') can only be given for a rank-0 input
// RUN: not kiln-run %t/prog.kmod --function scalars --input 2 --input 1 --input 1 --input 1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADI1
// BADI1: kiln-run: error: function 'scalars': input 0 ('arg0'): '2' is not a valid i1 literal
// RUN: not kiln-run %t/prog.kmod --function scalars --input 1 --input 1.5 --input 1 --input 1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADI32
// BADI32: kiln-run: error: function 'scalars': input 1 ('arg1'): '1.5' is not a valid i32 literal
// RUN: not kiln-run %t/prog.kmod --function scalars --input 1 --input 2147483648 --input 1 --input 1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANGE
// RANGE: kiln-run: error: function 'scalars': input 1 ('arg1'): '2147483648' is not a valid i32 literal
// RUN: not kiln-run %t/prog.kmod --function scalars --input 1 --input 1 --input 1 --input 1e999 2>&1 \
// RUN:   | FileCheck %s --check-prefix=F64RANGE
// F64RANGE: kiln-run: error: function 'scalars': input 3 ('arg3'): '1e999' is out of range for f64
//
// Errors: malformed .npy files (bad magic, data cut short, header cut short).
// RUN: printf 'NOTNUMPY-this-is-not-an-array' > %t/badmagic.npy
// RUN: not kiln-run %t/prog.kmod --function affine --input 2 --input %t/badmagic.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MAGIC
// MAGIC: kiln-run: error: function 'affine': input 1 ('x'): '{{.*}}badmagic.npy': not a .npy file (bad magic)
// RUN: head -c 136 %t/x.npy > %t/truncated.npy
// RUN: not kiln-run %t/prog.kmod --function affine --input 2 --input %t/truncated.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRUNC
// TRUNC: kiln-run: error: function 'affine': input 1 ('x'): '{{.*}}truncated.npy': truncated .npy file: the data is 8 bytes but the shape needs 16
// RUN: head -c 20 %t/x.npy > %t/header.npy
// RUN: not kiln-run %t/prog.kmod --function affine --input 2 --input %t/header.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HEADER
// HEADER: kiln-run: error: function 'affine': input 1 ('x'): '{{.*}}header.npy': truncated .npy file: the header is {{[0-9]+}} bytes but only 10 follow
//
// Errors: the module. Missing, not a module at all, truncated, corrupted.
// RUN: not kiln-run %t/missing.kmod --list 2>&1 | FileCheck %s --check-prefix=NOKMOD
// NOKMOD: kiln-run: error: cannot open '{{.*}}missing.kmod': No such file or directory
// RUN: not kiln-run %t/prog.mlir --list 2>&1 | FileCheck %s --check-prefix=NOTKMOD
// NOTKMOD: kiln-run: error: '{{.*}}prog.mlir': not a .kmod module (missing the 'KMOD' file identifier)
// RUN: head -c 1000 %t/prog.kmod > %t/cut.kmod
// RUN: not kiln-run %t/cut.kmod --list 2>&1 | FileCheck %s --check-prefix=CUT
// CUT: kiln-run: error: '{{.*}}cut.kmod': malformed .kmod module: {{.*}}truncated or corrupted
// RUN: %python %t/npy.py flip %t/prog.kmod %t/flipped.kmod
// RUN: not kiln-run %t/flipped.kmod --function affine --input 2 --input %t/x.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FLIP
// FLIP: kiln-run: error: '{{.*}}flipped.kmod': corrupted .kmod module: the body checksum is 0x{{[0-9a-f]+}} but the module records 0x{{[0-9a-f]+}}
// RUN: not kiln-run %t/out --list 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: kiln-run: error: cannot read '{{.*}}out': Is a directory
//
// Errors: --output-dir naming a file.
// RUN: not kiln-run %t/prog.kmod --function make --input 1 --output-dir %t/x.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OUTDIR
// OUTDIR: kiln-run: error: '{{.*}}x.npy' exists and is not a directory

//--- prog.mlir
// y = a * x + 1 and the sum of y as f64.
func.func @affine(%a: tensor<f32> {kiln.name = "a"}, %x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<4xf32> {kiln.name = "y"}, tensor<f64> {kiln.name = "total"}) {
  %ab = kiln.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %ax = kiln.mul %ab, %x : tensor<4xf32>
  %one = kiln.constant dense<1.0> : tensor<4xf32>
  %y = kiln.add %ax, %one : tensor<4xf32>
  %s = kiln.reduce_sum %y, dims = [0] : tensor<4xf32>
  %t = kiln.cast %s : tensor<f32> to tensor<f64>
  return %y, %t : tensor<4xf32>, tensor<f64>
}

// n * [0, 1, 2, 3], 10 * row + column, and [0, 1, 2] >= 1.
func.func @make(%n: tensor<i32>) -> (tensor<4xf32> {kiln.name = "v"}, tensor<2x3xi64> {kiln.name = "grid"}, tensor<3xi1>) {
  %i = kiln.iota dim = 0 : tensor<4xi32>
  %nb = kiln.broadcast_in_dim %n, dims = [] : (tensor<i32>) -> tensor<4xi32>
  %vi = kiln.mul %i, %nb : tensor<4xi32>
  %v = kiln.cast %vi : tensor<4xi32> to tensor<4xf32>
  %r = kiln.iota dim = 0 : tensor<2x3xi64>
  %c = kiln.iota dim = 1 : tensor<2x3xi64>
  %ten = kiln.constant dense<10> : tensor<2x3xi64>
  %r10 = kiln.mul %r, %ten : tensor<2x3xi64>
  %grid = kiln.add %r10, %c : tensor<2x3xi64>
  %k = kiln.iota dim = 0 : tensor<3xi32>
  %one = kiln.constant dense<1> : tensor<3xi32>
  %mask = kiln.compare ge, %k, %one : tensor<3xi32>
  return %v, %grid, %mask : tensor<4xf32>, tensor<2x3xi64>, tensor<3xi1>
}

// (!p, p ? n : -n, 2 * m, d / 2)
func.func @scalars(%p: tensor<i1>, %n: tensor<i32>, %m: tensor<i64>, %d: tensor<f64>) -> (tensor<i1>, tensor<i32>, tensor<i64>, tensor<f64>) {
  %f = kiln.constant dense<false> : tensor<i1>
  %np = kiln.compare eq, %p, %f : tensor<i1>
  %nn = kiln.neg %n : tensor<i32>
  %sel = kiln.select %p, %n, %nn : tensor<i1>, tensor<i32>
  %two = kiln.constant dense<2> : tensor<i64>
  %m2 = kiln.mul %m, %two : tensor<i64>
  %h = kiln.constant dense<0.5> : tensor<f64>
  %d2 = kiln.mul %d, %h : tensor<f64>
  return %np, %sel, %m2, %d2 : tensor<i1>, tensor<i32>, tensor<i64>, tensor<f64>
}

//--- single.mlir
func.func @double(%x: tensor<f32>) -> tensor<f32> {
  %0 = kiln.add %x, %x : tensor<f32>
  return %0 : tensor<f32>
}

//--- npy.py
# npy.py write FILE DESCR DIMS VALUES...   (DIMS comma-separated, '' = rank 0)
# npy.py dump FILE...                      (prints descr, shape and values)
# npy.py flip IN OUT                       (inverts one byte in the middle)
import ast
import struct
import sys

FORMATS = {'<f4': 'f', '<f8': 'd', '|b1': '?', '<i4': 'i', '<i8': 'q'}


def write(path, descr, shape, values):
    shape = tuple(int(d) for d in shape.split(',') if d)
    fmt = FORMATS[descr]
    if fmt in 'fd':
        values = [float(v) for v in values]
    elif fmt == '?':
        values = [v in ('1', 'true') for v in values]
    else:
        values = [int(v) for v in values]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, shape)
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)))
        f.write(header.encode('latin1'))
        f.write(struct.pack('<%d%s' % (len(values), fmt), *values))


def dump(path):
    data = open(path, 'rb').read()
    assert data[:6] == b'\x93NUMPY', 'bad magic'
    if data[6] == 1:
        length, offset = struct.unpack('<H', data[8:10])[0], 10
    else:
        length, offset = struct.unpack('<I', data[8:12])[0], 12
    header = ast.literal_eval(data[offset:offset + length].decode('latin1'))
    body = data[offset + length:]
    count = 1
    for d in header['shape']:
        count *= d
    fmt = FORMATS[header['descr']]
    assert len(body) == count * struct.calcsize(fmt), 'size mismatch'
    values = list(struct.unpack('<%d%s' % (count, fmt), body))
    print(header['descr'], header['shape'], values)


if sys.argv[1] == 'write':
    write(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
elif sys.argv[1] == 'dump':
    for p in sys.argv[2:]:
        dump(p)
elif sys.argv[1] == 'flip':
    data = bytearray(open(sys.argv[2], 'rb').read())
    data[len(data) // 2] ^= 0xff
    open(sys.argv[3], 'wb').write(bytes(data))
