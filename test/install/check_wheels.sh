#!/usr/bin/env bash
# check_wheels.sh SOURCE_ROOT BUILD_DIR WORK_DIR
#
# Builds kiln's two wheels from BUILD_DIR (tools/build-wheels.sh, which
# reuses the build tree) and installs each into a fresh virtualenv outside
# the build tree:
#   - kiln: `import kiln` jits a function whose code calls every support
#     archive the compiler links into modules (a oneDNN convolution, a
#     product, attention), checked against numpy, and saves it; kiln and
#     kiln_runtime share the one runtime library the wheel ships;
#   - kiln-runtime: `import kiln_runtime` loads that module and computes the
#     same; the wheel holds no LLVM or MLIR and no compiler package.
# Nothing may come from the source or build tree: the virtualenvs live in a
# temporary directory and the scripts run from there.
set -euo pipefail

src="$1"
build="$2"
work="$3"
rm -rf "$work"
mkdir -p "$work/dist"

"$src/tools/build-wheels.sh" "$work/dist" "$build" >"$work/build-wheels.log" 2>&1 || {
  cat "$work/build-wheels.log" >&2
  exit 1
}
kiln_wheel=$(ls "$work"/dist/kiln-[0-9]*.whl)
runtime_wheel=$(ls "$work"/dist/kiln_runtime-[0-9]*.whl)
python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")

outside=$(mktemp -d)
trap 'rm -rf "$outside"' EXIT

# numpy, the wheels' one dependency, comes from the system's site packages
# (the suite runs offline); --no-index: nothing else may be fetched.
make_env() {
  "$python" -m venv --system-site-packages "$1"
  "$1/bin/python" -m pip install -q --no-index --disable-pip-version-check "$2"
}

make_env "$outside/kiln-env" "$kiln_wheel"
cd "$outside"
cat >"$outside/compile_and_run.py" <<'PY'
import os, sys
import numpy as np
import kiln
import kiln.numpy as knp
import kiln_runtime

for module in (kiln, kiln_runtime):
    if "/site-packages/" not in module.__file__:
        sys.exit(f"{module.__name__} imported from {module.__file__}")
# Both packages' extensions run on the wheel's one runtime library.
with open("/proc/self/maps") as maps:
    runtimes = {os.path.realpath(line.split()[-1]) for line in maps
                if line.rstrip().endswith("/libkiln_runtime.so")}
shipped = os.path.realpath(os.path.join(
    os.path.dirname(kiln_runtime.__file__), "_libs", "libkiln_runtime.so"))
if runtimes != {shipped}:
    sys.exit(f"kiln and kiln_runtime map {sorted(runtimes)}, not {shipped}")

def model(x, w, q):
    y = kiln.nn.conv(x, w, padding="SAME")          # oneDNN convolution
    z = knp.matmul(knp.reshape(y, (4, 64)), q)      # oneDNN product
    a = kiln.nn.scaled_dot_product_attention(z[None], z[None], z[None])
    return a[0]

rng = np.random.default_rng(0)
x = rng.standard_normal((1, 3, 8, 8), dtype=np.float32)
w = rng.standard_normal((4, 3, 3, 3), dtype=np.float32)
q = rng.standard_normal((64, 16), dtype=np.float32)
compiled = kiln.jit(model).lower(x, w, q).compile()
got = np.asarray(compiled(x, w, q))

# numpy's answer.
pad = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
y = np.zeros((1, 4, 8, 8), np.float32)
for i in range(8):
    for j in range(8):
        y[0, :, i, j] = np.tensordot(w, pad[0, :, i:i + 3, j:j + 3], 3)
z = y.reshape(4, 64) @ q
s = z @ z.T / np.sqrt(16)
p = np.exp(s - s.max(-1, keepdims=True))
want = (p / p.sum(-1, keepdims=True)) @ z
error = np.abs(got - want).max() / np.abs(want).max()
if not error < 1e-4:
    sys.exit(f"the wheel's kiln computes a relative error of {error}")
compiled.save(sys.argv[1])
with open(sys.argv[1] + ".name", "w") as out:
    out.write(compiled.name)
np.save(sys.argv[2], want)
for name, value in (("x", x), ("w", w), ("q", q)):
    np.save(f"{sys.argv[3]}/{name}.npy", value)
print("kiln wheel: ok")
PY
"$outside/kiln-env/bin/python" "$outside/compile_and_run.py" \
  "$outside/model.kmod" "$outside/want.npy" "$outside"

# The compiler's archives are in the wheel; a wheel without one fails with
# the error that says where it looked.
site=$("$outside/kiln-env/bin/python" -c 'import kiln, os; print(os.path.dirname(os.path.dirname(kiln.__file__)))')
for archive in "$build"/lib/kiln/libkiln_*.a; do
  if [ ! -e "$site/kiln/_libs/$(basename "$archive")" ]; then
    echo "check_wheels: the kiln wheel has no kiln/_libs/$(basename "$archive")" >&2
    exit 1
  fi
done
rm "$site/kiln/_libs/libkiln_attention.a"
if "$outside/kiln-env/bin/python" "$outside/compile_and_run.py" \
     "$outside/unused.kmod" "$outside/unused.npy" "$outside" \
     >"$outside/missing.log" 2>&1; then
  echo "check_wheels: the kiln wheel compiled attention without its archive" >&2
  exit 1
fi
if ! grep -q "libkiln_attention.a is not installed where this kiln looks" \
     "$outside/missing.log"; then
  echo "check_wheels: no clear error without the archive:" >&2
  cat "$outside/missing.log" >&2
  exit 1
fi

make_env "$outside/runtime-env" "$runtime_wheel"
"$outside/runtime-env/bin/python" - "$outside" "$(cat "$outside/model.kmod.name")" <<'PY'
import glob, os, sys
import numpy as np
import kiln_runtime

work = sys.argv[1]
if "/site-packages/" not in kiln_runtime.__file__:
    sys.exit(f"kiln_runtime imported from {kiln_runtime.__file__}")
try:
    import kiln  # noqa: F401
    sys.exit("the kiln-runtime wheel installed the compiler's package")
except ImportError:
    pass
package = os.path.dirname(kiln_runtime.__file__)
for native in glob.glob(f"{package}/*.so") + glob.glob(f"{package}/_libs/*.so"):
    needed = os.popen(f"ldd {native}").read()
    if "LLVM" in needed or "MLIR" in needed:
        sys.exit(f"{native} links LLVM or MLIR:\n{needed}")
module = kiln_runtime.load(f"{work}/model.kmod")
args = [np.load(f"{work}/{name}.npy") for name in ("x", "w", "q")]
got = np.asarray(module[sys.argv[2]](*args))
want = np.load(f"{work}/want.npy")
error = np.abs(got - want).max() / np.abs(want).max()
if not error < 1e-4:
    sys.exit(f"the kiln-runtime wheel computes a relative error of {error}")
print("kiln-runtime wheel: ok")
PY

# The MPI and Gloo plug-ins, where the build has them, are in both wheels'
# runtime.
for plugin in libkiln_comm_mpi.so libkiln_comm_gloo.so; do
  [ -e "$build/lib/kiln/$plugin" ] || continue
  for env in kiln-env runtime-env; do
    if ! ls "$outside/$env"/lib/python*/site-packages/kiln_runtime/_libs/$plugin >/dev/null 2>&1; then
      echo "check_wheels: $env has no kiln_runtime/_libs/$plugin" >&2
      exit 1
    fi
  done
done
echo "check_wheels: ok"
