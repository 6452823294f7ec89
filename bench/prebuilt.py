"""Modules compiled on one machine and run on another.

A GPU machine may have neither kiln-compile nor LLVM: the CUDA benches take
`--emit-modules DIR --arch sm_XX` (compile every module of the run into
DIR, on any machine with kiln built, with no GPU or PyTorch) and
`--modules-from DIR` (run those modules with kiln-run alone). DIR/ARCH
names the architecture they were compiled for, which the report states.
"""

import os
import sys

# kiln-compile's host-code flags for modules that run on another machine:
# code any x86-64 of the last decade runs, not this machine's (AVX-512, say).
HOST_FLAGS = ["--target-cpu=x86-64-v3"]


def add_options(parser, arch_help="with --emit-modules: the GPU's sm_XX "
                                   "(kiln-compile --cuda-arch)"):
    """--emit-modules, --arch and --modules-from on `parser`."""
    parser.add_argument("--emit-modules", default=None, metavar="DIR",
                        help="compile the modules of this run for --arch into "
                             "DIR and stop (no GPU or PyTorch needed)")
    parser.add_argument("--arch", default=None, help=arch_help)
    parser.add_argument("--modules-from", default=None, metavar="DIR",
                        help="run the modules --emit-modules wrote into DIR "
                             "instead of compiling them (the GPU machine "
                             "needs kiln-run only)")


def check_options(parser, args, need_arch=True):
    """Refuses --emit-modules with --modules-from, and without --arch
    where `need_arch`."""
    if need_arch and args.emit_modules and not args.arch:
        parser.error("--emit-modules needs --arch, e.g. --arch sm_90")
    if args.emit_modules and args.modules_from:
        parser.error("--emit-modules and --modules-from exclude each other")


def start(folder, arch):
    """Makes `folder` for --emit-modules and records `arch` in it."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "ARCH"), "w") as f:
        f.write(arch + "\n")


def arch_of(folder):
    """The architecture `folder`'s modules were compiled for; raises
    RuntimeError where --emit-modules did not write it."""
    try:
        with open(os.path.join(folder, "ARCH")) as f:
            return f.read().strip()
    except OSError as e:
        raise RuntimeError(f"--modules-from {folder}: {e} (write it with "
                           "--emit-modules)") from e


def module(folder, name):
    """DIR/NAME.kmod of --modules-from; raises RuntimeError where it is
    missing."""
    path = os.path.join(folder, name + ".kmod")
    if not os.path.exists(path):
        raise RuntimeError(f"{path} is missing (--emit-modules with the same "
                           "options)")
    return path


def complete(script, folder, names):
    """Whether `folder` serves --modules-from for modules `names` (its ARCH
    and every module there); where not, `script` says on stderr what is
    missing. Checked before a bench needs the GPU, so that a kit prepared
    with other options fails on any machine."""
    try:
        arch_of(folder)
        for name in names:
            module(folder, name)
    except RuntimeError as e:
        print(f"{script}: {e}", file=sys.stderr)
        return False
    return True
