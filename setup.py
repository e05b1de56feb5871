"""Build gpuprims._core: C glue and CPU backend (csrc/) plus CUDA kernels (cuda/*.cu).

nvcc compiles each .cu file to an object and the C compiler each .c file (each in parallel, one
file per core); setuptools links everything with g++ against the static CUDA runtime, so the
extension imports on machines without an NVIDIA driver.  Without nvcc (or with
GPUPRIMS_DISABLE_CUDA=1) the build is CPU-only.

Environment:
  GPUPRIMS_CUDA_ARCHS   GPU targets, e.g. "90" or "80;90+PTX" or "native"
                        (default: 75;80;90;100;120+PTX).
  GPUPRIMS_DISABLE_CUDA set to 1 for a CPU-only build.
  GPUPRIMS_NVCC_FLAGS   extra nvcc flags.
  CUDA_HOME / CUDA_PATH where the CUDA toolkit lives (else nvcc is looked up on PATH).

Every setting that changes the binary (the list above, nvcc's version, the compilers and their
flags, NumPy's headers) is part of the build's key: nvcc's objects are cached per key, and a key
other than the last build's rebuilds and relinks the extension, so a build always matches its
settings.
"""
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent.resolve()
DEFAULT_ARCHS = "75;80;90;100;120+PTX"


def find_cuda_home():
    """(the CUDA toolkit folder, None) or (None, why the build is CPU-only)."""
    if os.environ.get("GPUPRIMS_DISABLE_CUDA", "0") not in ("", "0"):
        return None, "GPUPRIMS_DISABLE_CUDA is set"
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(variable)
        if home and (Path(home) / "bin" / "nvcc").exists():
            return Path(home), None
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None, "nvcc not found (looked in CUDA_HOME, CUDA_PATH, PATH)"
    return toolkit_of(nvcc), None


def toolkit_of(nvcc):
    """The toolkit an nvcc on PATH belongs to.  The nvcc found may be a symbolic link or a wrapper
    script outside the toolkit, so nvcc is asked where it runs from (its dry run's _HERE_)."""
    try:
        dry_run = subprocess.run([nvcc, "-v", "--dryrun", "-E", "-x", "cu", os.devnull],
                                 capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.SubprocessError):
        dry_run = ""
    for line in dry_run.splitlines():
        if line.startswith("#$ _HERE_="):
            return Path(line.split("=", 1)[1].strip()).resolve().parent
    return Path(nvcc).resolve().parent.parent


def nvcc_version(nvcc):
    """nvcc --version's text: part of the build's key."""
    return subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout.strip()


def announce_cpu_only(reason):
    """Says that the build is CPU-only where the user sees it: pip shows a build's output only with
    -v, so the message also goes to the terminal when there is one."""
    message = f"gpuprims: CPU-only build: {reason}\n"
    sys.stderr.write(message)
    try:
        with open("/dev/tty", "w") as terminal:
            terminal.write("WARNING: " + message)
    except OSError:  # no terminal (CI, a batch job): stderr is the log
        pass


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


def nvcc_flags(ext):
    """nvcc's command line for the extension's .cu files, less the file names."""
    return (["-O3", "-std=c++17", "-Xcompiler", "-fPIC,-fvisibility=hidden,-Wall,-Wextra",
             "-Xfatbin=-compress-all", "--threads", "0"]
            + [f"-I{d}" for d in ext.include_dirs]
            + gencode_flags(ARCHS)
            + shlex.split(os.environ.get("GPUPRIMS_NVCC_FLAGS", "")))


def build_key(ext):
    """Everything besides the sources that the extension's binary depends on."""
    key = {"cuda_home": str(CUDA_HOME) if CUDA_HOME else None, "numpy": numpy.__version__,
           "macros": ext.define_macros, "c_flags": ext.extra_compile_args, "link": ext.extra_link_args,
           "libraries": ext.libraries, "library_dirs": ext.library_dirs,
           "compilers": sysconfig.get_config_vars("CC", "CXX", "CFLAGS", "LDSHARED"),
           "environment": {name: os.environ.get(name) for name in ("CC", "CXX", "CFLAGS", "CPPFLAGS", "LDFLAGS")}}
    if CUDA_HOME is not None:
        key["nvcc"] = nvcc_version(CUDA_HOME / "bin" / "nvcc")
        key["nvcc_flags"] = nvcc_flags(ext)
    return key


def record_key(stamp, key):
    """Writes the build's key to `stamp` when it differs from the one there; True when it did.  The
    stamp is one of the extension's dependencies, so a changed key makes it newer than any extension
    built before and setuptools rebuilds and relinks; an unchanged one keeps its time."""
    text = json.dumps(key, sort_keys=True, indent=1, default=str)
    if stamp.exists() and stamp.read_text() == text:
        return False
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(text)
    return True


# The instruction-set files each compile all of csrc/cpu/simd_kernels.h, minutes apiece where every
# other C file takes about a second; the baseline's (SSE2 vectors) is the longest.  A parallel build
# starts them first, longest first, so that it does not end on one of them alone.
LONGEST_C_SOURCES = ("csrc/cpu/isa_baseline.c", "csrc/cpu/isa_avx2.c", "csrc/cpu/isa_avx512.c")


def parallel_workers(count):
    """Compilers to run at once for `count` files: one per core."""
    return max(1, min(count, os.cpu_count() or 1))


class BuildExtWithNvcc(build_ext):
    """Compiles the extension's .cu sources with nvcc and its C sources in parallel, then lets
    setuptools link."""

    def build_extensions(self):
        compile_serially = self.compiler.compile

        def compile_in_parallel(sources, *args, **kwargs):
            order = sorted(sources, key=lambda s: (LONGEST_C_SOURCES.index(s) if s in LONGEST_C_SOURCES
                                                   else len(LONGEST_C_SOURCES)))
            with ThreadPoolExecutor(parallel_workers(len(sources))) as pool:
                objects = dict(zip(order, pool.map(lambda s: compile_serially([s], *args, **kwargs), order)))
            return [obj for source in sources for obj in objects[source]]

        self.compiler.compile = compile_in_parallel
        super().build_extensions()

    def build_extension(self, ext):
        cuda_sources = [s for s in ext.sources if s.endswith(".cu")]
        ext.sources = [s for s in ext.sources if not s.endswith(".cu")]
        key = build_key(ext)
        stamp = Path(self.build_temp) / "gpuprims-build-key.json"
        if record_key(stamp, key):
            # Older setuptools compare whole seconds: a stamp written in the second the last build
            # ended is not newer than it, so the old extension goes.
            Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
        ext.depends = list(ext.depends or []) + [str(stamp)]
        if cuda_sources:
            objects = self.compile_cuda(cuda_sources, key)
            ext.extra_objects = objects + list(ext.extra_objects or [])
            ext.depends += objects  # a rebuilt object relinks the extension
        super().build_extension(ext)

    def compile_cuda(self, sources, key):
        """nvcc's objects, in a folder of their own for each build key (switching settings back
        reuses them); within it an object is rebuilt when its source or a header is newer."""
        nvcc = str(CUDA_HOME / "bin" / "nvcc")
        flags = key["nvcc_flags"]
        digest = hashlib.sha256(json.dumps([key["nvcc"], flags, key["cuda_home"]]).encode()).hexdigest()[:16]
        out_dir = Path(self.build_temp) / f"cuda-{digest}"
        out_dir.mkdir(parents=True, exist_ok=True)
        headers = [p for d in ("cuda", "csrc") for p in (ROOT / d).rglob("*.*h")]
        newest_header = max((p.stat().st_mtime for p in headers), default=0)

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

        with ThreadPoolExecutor(parallel_workers(len(sources))) as pool:
            return list(pool.map(compile_one, sources))


CUDA_HOME, CPU_ONLY_REASON = find_cuda_home()
ARCHS = os.environ.get("GPUPRIMS_CUDA_ARCHS", DEFAULT_ARCHS)


def core_extension():
    """gpuprims._core, with CUDA when CUDA_HOME is set."""
    sources = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc").rglob("*.c"))
    # A changed header rebuilds the C sources (csrc/cpu/simd_kernels.h is compiled by three of them).
    headers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc").rglob("*.h"))
    define_macros = []
    libraries = ["pthread"]  # the host thread pool (csrc/parallel)
    library_dirs = []
    if CUDA_HOME is not None:
        sources += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cuda").rglob("*.cu"))
        define_macros.append(("GPUPRIMS_CUDA_ARCHS", f'"{ARCHS}"'))
        libraries += ["cudart_static", "rt", "dl"]
        for candidate in ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"):
            if (CUDA_HOME / candidate / "libcudart_static.a").exists():
                library_dirs.append(str(CUDA_HOME / candidate))
                break
    else:
        define_macros.append(("GPUPRIMS_NO_CUDA", "1"))
    return Extension(
        "gpuprims._core",
        sources=sources,
        depends=headers,
        include_dirs=["csrc", "cuda", numpy.get_include()],  # includes name their folder: "contract/gp_call.h"
        define_macros=define_macros,
        libraries=libraries,
        library_dirs=library_dirs,
        # -g1: line tables, for backtraces; -g's variable locations took a third of the build's time
        extra_compile_args=["-std=c11", "-O3", "-Wall", "-Wextra", "-g1"],
        extra_link_args=[f"-Wl,--version-script={ROOT / 'csrc' / 'glue' / 'exports.map'}"],
        language="c++",  # link with g++: the CUDA runtime needs libstdc++
    )


if __name__ == "__main__":  # setuptools runs this file as __main__; tests import its functions
    if CUDA_HOME is not None:
        print(f"gpuprims: building with CUDA from {CUDA_HOME} for {ARCHS}", file=sys.stderr)
    else:
        announce_cpu_only(CPU_ONLY_REASON)
    setup(ext_modules=[core_extension()], cmdclass={"build_ext": BuildExtWithNvcc})
