// kiln-run with the 8- and 16-bit integers, the unsigned integers and the
// half-precision floats: literal inputs in each type's range (and the
// errors outside it), printing, and .npy files in numpy's descriptors
// ('|u1', '<u8', '|i1', '<f2', ...). Expected values are worked out by hand.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: kiln-compile %t/prog.mlir -o %t/prog.kmod
//
// RUN: kiln-run %t/prog.kmod --list | FileCheck %s --check-prefix=LIST
// LIST: scalars(arg0: ui8[], arg1: i8[], arg2: ui16[], arg3: i16[], arg4: ui32[], arg5: ui64[]) -> (out0: ui8[], out1: i8[], out2: ui16[], out3: i16[], out4: ui32[], out5: ui64[])
// LIST-NEXT: halves(x: f16[3], y: bf16[3]) -> (out0: f16[3], out1: bf16[3], out2: f32[3])
// LIST-NEXT: bytes(x: ui8[4], y: i16[2,2]) -> (out0: ui8[4], out1: i16[2,2], out2: ui64[4])
//
// Each scalar plus one, wrapping at the top of its range: 255 + 1 is 0 in
// ui8, 127 + 1 is -128 in i8, 2^64 - 1 + 1 is 0 in ui64.
// RUN: kiln-run %t/prog.kmod --function scalars --input 255 --input 127 --input 65535 \
// RUN:   --input -32768 --input 4294967295 --input 18446744073709551615 | FileCheck %s --check-prefix=WRAP
// WRAP: out0: ui8[] = 0
// WRAP-NEXT: out1: i8[] = -128
// WRAP-NEXT: out2: ui16[] = 0
// WRAP-NEXT: out3: i16[] = -32767
// WRAP-NEXT: out4: ui32[] = 0
// WRAP-NEXT: out5: ui64[] = 0
// RUN: kiln-run %t/prog.kmod --function scalars --input 7 --input -7 --input 7 \
// RUN:   --input 7 --input 7 --input 18446744073709551614 | FileCheck %s --check-prefix=SMALL
// SMALL: out0: ui8[] = 8
// SMALL-NEXT: out1: i8[] = -6
// SMALL: out5: ui64[] = 18446744073709551615
//
// Literals outside the type's range are errors, negative ones for unsigned
// types included.
// RUN: not kiln-run %t/prog.kmod --function scalars --input 256 --input 0 --input 0 \
// RUN:   --input 0 --input 0 --input 0 2>&1 | FileCheck %s --check-prefix=RANGE8
// RANGE8: '256' is not a valid ui8 literal
// RUN: not kiln-run %t/prog.kmod --function scalars --input -1 --input 0 --input 0 \
// RUN:   --input 0 --input 0 --input 0 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: '-1' is not a valid ui8 literal
// RUN: not kiln-run %t/prog.kmod --function scalars --input 0 --input 128 --input 0 \
// RUN:   --input 0 --input 0 --input 0 2>&1 | FileCheck %s --check-prefix=RANGEI8
// RANGEI8: '128' is not a valid i8 literal
//
// .npy files: f16 travels as '<f2', bf16 as '<f4' (numpy has no bfloat16);
// 1/3 rounds to 0.33325 in f16 and 0.333984 in bf16.
// RUN: %python %t/npy.py write %t/x.npy '<f2' 3 0.5 -2 0.3333333
// RUN: %python %t/npy.py write %t/y.npy '<f4' 3 0.5 -2 0.3333333
// RUN: kiln-run %t/prog.kmod --function halves --input %t/x.npy --input %t/y.npy \
// RUN:   --output-dir %t/out | FileCheck %s --check-prefix=HALVES
// HALVES: out0: f16[3] saved to
// RUN: %python %t/npy.py dump %t/out/out0.npy %t/out/out1.npy %t/out/out2.npy \
// RUN:   | FileCheck %s --check-prefix=DUMP
// DUMP: <f2 (3,) [1.0, -4.0, 0.66650390625]
// DUMP-NEXT: <f4 (3,) [1.0, -4.0, 0.66796875]
// DUMP-NEXT: <f4 (3,) [0.5, -2.0, 0.333251953125]
//
// numpy saves an ml_dtypes.bfloat16 array as untyped '<V2' (or '|V2')
// bytes; a bf16 input takes them bit for bit: 0x3F00 = 0.5, 0xC000 = -2,
// 0x3EAB = 0.333984375 give the same outputs as the '<f4' file above.
// RUN: %python %t/npy.py write %t/yv.npy '<V2' 3 16128 49152 16043
// RUN: kiln-run %t/prog.kmod --function halves --input %t/x.npy --input %t/yv.npy \
// RUN:   | FileCheck %s --check-prefix=UNTYPED
// UNTYPED: out1: bf16[3] = [1, -4, 0.668]
// RUN: %python %t/npy.py write %t/yp.npy '|V2' 3 16128 49152 16043
// RUN: kiln-run %t/prog.kmod --function halves --input %t/x.npy --input %t/yp.npy \
// RUN:   | FileCheck %s --check-prefix=UNTYPED
// Untyped bytes anywhere else are refused, saying why.
// RUN: not kiln-run %t/prog.kmod --function halves --input %t/yv.npy --input %t/y.npy \
// RUN:   2>&1 | FileCheck %s --check-prefix=UNTYPED-F16
// UNTYPED-F16: input 0 ('x'): '{{.*}}yv.npy': untyped dtype '<V2' (how numpy saves a dtype it does not define, such as ml_dtypes.bfloat16) is not supported here
// RUN: %python %t/npy.py write %t/y4.npy '<V4' 3 1 2 3
// RUN: not kiln-run %t/prog.kmod --function halves --input %t/x.npy --input %t/y4.npy \
// RUN:   2>&1 | FileCheck %s --check-prefix=UNTYPED-SIZE
// UNTYPED-SIZE: input 1 ('y'): '{{.*}}y4.npy': untyped dtype '<V4' has 4-byte elements, but bf16 has 2
// RUN: %python %t/npy.py write %t/y8.npy '<f8' 3 1 2 3
// RUN: not kiln-run %t/prog.kmod --function halves --input %t/x.npy --input %t/y8.npy \
// RUN:   2>&1 | FileCheck %s --check-prefix=BF16-EXPECTED
// BF16-EXPECTED: holds <f8 data but the input is bf16 (expected <f4, or <V2 as numpy saves ml_dtypes.bfloat16)

//
// Integer .npy files of numpy's descriptors: '|u1' in, x / 2 + 1 out (as
// '|u1'), '<i2' in and its negation out (-32768 is its own), and a '<u8'
// out whose values reach 2^63.
// RUN: %python %t/npy.py write %t/b.npy '|u1' 4 0 1 200 255
// RUN: %python %t/npy.py write %t/s.npy '<i2' 2,2 -32768 -1 0 32767
// RUN: kiln-run %t/prog.kmod --function bytes --input %t/b.npy --input %t/s.npy \
// RUN:   | FileCheck %s --check-prefix=BYTES
// BYTES: out0: ui8[4] = [1, 1, 101, 128]
// BYTES-NEXT: out1: i16[2,2] = {{\[}}[-32768, 1], [0, -32767]]
// BYTES-NEXT: out2: ui64[4] = [0, 9223372036854775808, 0, 9223372036854775808]
// RUN: kiln-run %t/prog.kmod --function bytes --input %t/b.npy --input %t/s.npy \
// RUN:   --output-dir %t/bout > /dev/null
// RUN: %python %t/npy.py dump %t/bout/out0.npy %t/bout/out1.npy %t/bout/out2.npy \
// RUN:   | FileCheck %s --check-prefix=BDUMP
// BDUMP: |u1 (4,) [1, 1, 101, 128]
// BDUMP-NEXT: <i2 (2, 2) [-32768, 1, 0, -32767]
// BDUMP-NEXT: <u8 (4,) [0, 9223372036854775808, 0, 9223372036854775808]

//--- prog.mlir
func.func @scalars(%a: tensor<ui8>, %b: tensor<i8>, %c: tensor<ui16>, %d: tensor<i16>, %e: tensor<ui32>, %f: tensor<ui64>) -> (tensor<ui8>, tensor<i8>, tensor<ui16>, tensor<i16>, tensor<ui32>, tensor<ui64>) {
  %a1 = kiln.constant dense<1> : tensor<ui8>
  %b1 = kiln.constant dense<1> : tensor<i8>
  %c1 = kiln.constant dense<1> : tensor<ui16>
  %d1 = kiln.constant dense<1> : tensor<i16>
  %e1 = kiln.constant dense<1> : tensor<ui32>
  %f1 = kiln.constant dense<1> : tensor<ui64>
  %0 = kiln.add %a, %a1 : tensor<ui8>
  %1 = kiln.add %b, %b1 : tensor<i8>
  %2 = kiln.add %c, %c1 : tensor<ui16>
  %3 = kiln.add %d, %d1 : tensor<i16>
  %4 = kiln.add %e, %e1 : tensor<ui32>
  %5 = kiln.add %f, %f1 : tensor<ui64>
  return %0, %1, %2, %3, %4, %5 : tensor<ui8>, tensor<i8>, tensor<ui16>, tensor<i16>, tensor<ui32>, tensor<ui64>
}

func.func @halves(%x: tensor<3xf16> {kiln.name = "x"}, %y: tensor<3xbf16> {kiln.name = "y"}) -> (tensor<3xf16>, tensor<3xbf16>, tensor<3xf32>) {
  %0 = kiln.add %x, %x : tensor<3xf16>
  %1 = kiln.add %y, %y : tensor<3xbf16>
  %2 = kiln.cast %x : tensor<3xf16> to tensor<3xf32>
  return %0, %1, %2 : tensor<3xf16>, tensor<3xbf16>, tensor<3xf32>
}

func.func @bytes(%x: tensor<4xui8> {kiln.name = "x"}, %y: tensor<2x2xi16> {kiln.name = "y"}) -> (tensor<4xui8>, tensor<2x2xi16>, tensor<4xui64>) {
  %one = kiln.constant dense<1> : tensor<4xui8>
  %half = kiln.shift_right %x, %one : tensor<4xui8>
  %0 = kiln.add %half, %one : tensor<4xui8>
  %1 = kiln.neg %y : tensor<2x2xi16>
  %wide = kiln.cast %x : tensor<4xui8> to tensor<4xui64>
  %k = kiln.constant dense<63> : tensor<4xui64>
  %4 = kiln.shift_left %wide, %k : tensor<4xui64>
  return %0, %1, %4 : tensor<4xui8>, tensor<2x2xi16>, tensor<4xui64>
}

//--- npy.py
# npy.py write FILE DESCR DIMS VALUES...   (DIMS comma-separated, '' = rank 0)
# npy.py dump FILE...                      (prints descr, shape and values)
import ast
import struct
import sys

FORMATS = {'<f2': 'e', '<f4': 'f', '<f8': 'd', '|u1': 'B', '|i1': 'b',
           '<u2': 'H', '<i2': 'h', '<u4': 'I', '<u8': 'Q',
           '<V2': 'H', '|V2': 'H', '<V4': 'I'}


def write(path, descr, shape, values):
    shape = tuple(int(d) for d in shape.split(',') if d)
    fmt = FORMATS[descr]
    values = [float(v) for v in values] if fmt in 'efd' else [int(v) for v in values]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, shape)
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)))
        f.write(header.encode('latin1'))
        f.write(struct.pack('<%d%s' % (len(values), fmt), *values))


def dump(path):
    data = open(path, 'rb').read()
    length, offset = struct.unpack('<H', data[8:10])[0], 10
    header = ast.literal_eval(data[offset:offset + length].decode('latin1'))
    body = data[offset + length:]
    count = 1
    for d in header['shape']:
        count *= d
    fmt = FORMATS[header['descr']]
    values = list(struct.unpack('<%d%s' % (count, fmt), body))
    print(header['descr'], header['shape'], values)


if sys.argv[1] == 'write':
    write(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
else:
    for p in sys.argv[2:]:
        dump(p)
