"""Build gpuprims._core: C glue and CPU backend (csrc/) plus CUDA kernels (cuda/*.cu).

nvcc compiles each .cu file to an object (in parallel); setuptools compiles the C files and links
everything with g++ against the static CUDA runtime, so the extension imports on machines without
an NVIDIA driver.  Without nvcc (or with GPUPRIMS_DISABLE_CUDA=1) the build is CPU-only.

Environment:
  GPUPRIMS_CUDA_ARCHS   GPU targets, e.g. "90" or "80;90+PTX" or "native"
                        (default: 75;80;90;100;120+PTX).
  GPUPRIMS_DISABLE_CUDA set to 1 for a CPU-only build.
  GPUPRIMS_NVCC_FLAGS   extra nvcc flags.
  CUDA_HOME / CUDA_PATH where the CUDA toolkit lives (else nvcc is looked up on PATH).
"""
import os
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent.resolve()
DEFAULT_ARCHS = "75;80;90;100;120+PTX"


def find_cuda_home():
    """The CUDA toolkit folder, or None when nvcc is not available or CUDA is disabled."""
    if os.environ.get("GPUPRIMS_DISABLE_CUDA", "0") not in ("", "0"):
        return None
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(variable)
        if home and (Path(home) / "bin" / "nvcc").exists():
            return Path(home)
    nvcc = shutil.which("nvcc")
    return Path(nvcc).resolve().parent.parent if nvcc else None


def gencode_flags(spec):
    """nvcc -gencode flags for a GPUPRIMS_CUDA_ARCHS value such as "75;80;90+PTX"."""
    if spec.strip() == "native":
        return ["-arch=native"]
    flags = []
    for item in spec.replace(",", ";").split(";"):
        item = item.strip()
        if not item:
            continue
        ptx = item.upper().endswith("+PTX")
        arch = item[:-4] if ptx else item
        arch = arch.replace(".", "").replace("sm_", "")
        if not arch.isdigit():
            raise SystemExit(f"GPUPRIMS_CUDA_ARCHS: cannot read {item!r} (want e.g. 90 or 120+PTX)")
        flags.append(f"-gencode=arch=compute_{arch},code=sm_{arch}")
        if ptx:
            flags.append(f"-gencode=arch=compute_{arch},code=compute_{arch}")
    if not flags:
        raise SystemExit("GPUPRIMS_CUDA_ARCHS names no architecture")
    return flags


class BuildExtWithNvcc(build_ext):
    """Compiles the extension's .cu sources with nvcc, then lets setuptools do the rest."""

    def build_extension(self, ext):
        cuda_sources = [s for s in ext.sources if s.endswith(".cu")]
        ext.sources = [s for s in ext.sources if not s.endswith(".cu")]
        if cuda_sources:
            objects = self.compile_cuda(cuda_sources, ext)
            ext.extra_objects = objects + list(ext.extra_objects or [])
            ext.depends = list(ext.depends or []) + objects  # a rebuilt object relinks the extension
        super().build_extension(ext)

    def compile_cuda(self, sources, ext):
        nvcc = str(CUDA_HOME / "bin" / "nvcc")
        out_dir = Path(self.build_temp) / "cuda"
        out_dir.mkdir(parents=True, exist_ok=True)
        headers = [p for d in ("cuda", "csrc") for p in (ROOT / d).rglob("*.*h")]
        newest_header = max((p.stat().st_mtime for p in headers), default=0)
        flags = (["-O3", "-std=c++17", "-Xcompiler", "-fPIC,-fvisibility=hidden,-Wall,-Wextra",
                  "-Xfatbin=-compress-all", "--threads", "0"]
                 + [f"-I{d}" for d in ext.include_dirs]
                 + gencode_flags(ARCHS)
                 + shlex.split(os.environ.get("GPUPRIMS_NVCC_FLAGS", "")))

        def compile_one(source):
            obj = out_dir / Path(source).with_suffix(".o")  # cuda/reduce/reduce.cu -> .../cuda/reduce/reduce.o
            obj.parent.mkdir(parents=True, exist_ok=True)
            src_time = max(Path(source).stat().st_mtime, newest_header)
            if obj.exists() and obj.stat().st_mtime >= src_time and not self.force:
                return str(obj)
            command = [nvcc, "-c", source, "-o", str(obj)] + flags
            print(" ".join(command), flush=True)
            subprocess.run(command, check=True)
            return str(obj)

        workers = max(1, min(len(sources), os.cpu_count() or 1))
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(compile_one, sources))


CUDA_HOME = find_cuda_home()
ARCHS = os.environ.get("GPUPRIMS_CUDA_ARCHS", DEFAULT_ARCHS)

sources = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc").rglob("*.c"))
# A changed header rebuilds the C sources (csrc/cpu/simd_kernels.h is compiled by three of them).
headers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc").rglob("*.h"))
include_dirs = ["csrc", "cuda", numpy.get_include()]  # includes name their folder: "contract/gp_call.h"
define_macros = []
libraries = ["pthread"]  # the host thread pool (csrc/parallel)
library_dirs = []
extra_link_args = [f"-Wl,--version-script={ROOT / 'csrc' / 'glue' / 'exports.map'}"]
if CUDA_HOME is not None:
    sources += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cuda").rglob("*.cu"))
    define_macros.append(("GPUPRIMS_CUDA_ARCHS", f'"{ARCHS}"'))
    libraries += ["cudart_static", "rt", "dl"]
    for candidate in ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"):
        if (CUDA_HOME / candidate / "libcudart_static.a").exists():
            library_dirs.append(str(CUDA_HOME / candidate))
            break
    print(f"gpuprims: building with CUDA from {CUDA_HOME} for {ARCHS}", file=sys.stderr)
else:
    define_macros.append(("GPUPRIMS_NO_CUDA", "1"))
    print("gpuprims: nvcc not found (or GPUPRIMS_DISABLE_CUDA set): building CPU-only",
          file=sys.stderr)

setup(
    ext_modules=[
        Extension(
            "gpuprims._core",
            sources=sources,
            depends=headers,
            include_dirs=include_dirs,
            define_macros=define_macros,
            libraries=libraries,
            library_dirs=library_dirs,
            extra_compile_args=["-std=c11", "-O2", "-Wall", "-Wextra"],
            extra_link_args=extra_link_args,
            language="c++",  # link with g++: the CUDA runtime needs libstdc++
        )
    ],
    cmdclass={"build_ext": BuildExtWithNvcc},
)
