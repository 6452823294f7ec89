"""kiln.runtime: the runtime-only package kiln_runtime, under kiln's name."""

from kiln_runtime import Function, Module, load, load_bytes  # noqa: F401
