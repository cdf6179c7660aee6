"""C code generation: emitter with CSE and operation counts, build and cache."""

from kidym.codegen.build import build, cache_dir, library_path
from kidym.codegen.cprint import OpCount
from kidym.codegen.emit import CCode, generate_c

__all__ = ["CCode", "OpCount", "build", "cache_dir", "generate_c", "library_path"]
