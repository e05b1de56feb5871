"""The build (setup.py): a build matches its settings, and finds the CUDA toolkit behind a wrapper.

These tests need the source tree (setup.py next to tests/), as in a checkout or an unpacked sdist;
they skip where only an installed gpuprims is present.
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETUP = ROOT / "setup.py"

pytestmark = [pytest.mark.skipif(not SETUP.exists(), reason="needs the source tree's setup.py"),
              pytest.mark.skipif(importlib.util.find_spec("setuptools") is None, reason="setup.py needs setuptools")]


SETTINGS = ("GPUPRIMS_CUDA_ARCHS", "GPUPRIMS_DISABLE_CUDA", "GPUPRIMS_NVCC_FLAGS", "CUDA_HOME", "CUDA_PATH")


def load_setup(monkeypatch, **environment):
    """setup.py as a module (its setup() call runs only as __main__), configured by `environment`."""
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    spec = importlib.util.spec_from_file_location("gpuprims_setup", SETUP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_toolkit(folder, version):
    """A CUDA toolkit folder whose bin/nvcc answers --version with `version` and, like the real
    one, names the folder it runs from in its dry run."""
    nvcc = folder / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text("#!/bin/sh\n"
                    f'case "$*" in *--dryrun*) echo "#$ _HERE_={nvcc.parent}" >&2;; '
                    f'*--version*) echo "Cuda compilation tools, release {version}";; esac\n')
    nvcc.chmod(0o755)
    return folder


def key_of(monkeypatch, **environment):
    module = load_setup(monkeypatch, **environment)
    return module.build_key(module.core_extension())


def test_build_key_changes_with_every_setting(monkeypatch, tmp_path):
    toolkit = str(fake_toolkit(tmp_path / "cuda-a", "13.0, V13.0.88"))
    newer = str(fake_toolkit(tmp_path / "cuda-b", "13.1, V13.1.10"))
    default = key_of(monkeypatch, CUDA_HOME=toolkit)
    assert default == key_of(monkeypatch, CUDA_HOME=toolkit)  # the same settings, the same key
    changed = {
        "archs": key_of(monkeypatch, CUDA_HOME=toolkit, GPUPRIMS_CUDA_ARCHS="90"),
        "cpu-only": key_of(monkeypatch, CUDA_HOME=toolkit, GPUPRIMS_DISABLE_CUDA="1"),
        "nvcc flags": key_of(monkeypatch, CUDA_HOME=toolkit, GPUPRIMS_NVCC_FLAGS="-lineinfo"),
        "nvcc version": key_of(monkeypatch, CUDA_HOME=newer),
        "C flags": key_of(monkeypatch, CUDA_HOME=toolkit, CFLAGS="-DNDEBUG"),
    }
    for setting, key in changed.items():
        assert key != default, setting
    assert changed["archs"]["nvcc_flags"] != default["nvcc_flags"]
    assert "nvcc" not in changed["cpu-only"]


def test_toolkit_found_behind_a_wrapper_script(monkeypatch, tmp_path):
    toolkit = fake_toolkit(tmp_path / "cuda-13.0", "13.0")
    wrappers = tmp_path / "wrappers"
    wrappers.mkdir()
    wrapper = wrappers / "nvcc"
    wrapper.write_text(f'#!/bin/sh\nexec {toolkit / "bin" / "nvcc"} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrappers}{os.pathsep}{os.environ['PATH']}")
    module = load_setup(monkeypatch)
    assert module.CUDA_HOME == toolkit.resolve()


def test_cpu_only_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvcc anywhere
    module = load_setup(monkeypatch)
    assert module.CUDA_HOME is None
    assert module.CPU_ONLY_REASON == "nvcc not found (looked in CUDA_HOME, CUDA_PATH, PATH)"
    assert load_setup(monkeypatch, GPUPRIMS_DISABLE_CUDA="1").CPU_ONLY_REASON == "GPUPRIMS_DISABLE_CUDA is set"


def small_project(folder):
    """A copy of setup.py over one small C source and the linker's export list: the build logic
    that test_rebuild_matches_its_settings checks runs in seconds (the package's own sources take
    minutes, and the install that every test run starts from compiles them already)."""
    (folder / "csrc" / "glue").mkdir(parents=True)
    shutil.copy(SETUP, folder / "setup.py")
    shutil.copy(ROOT / "csrc" / "glue" / "exports.map", folder / "csrc" / "glue" / "exports.map")
    (folder / "csrc" / "glue" / "module.c").write_text(
        "#include <Python.h>\n"
        "static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, \"_core\", NULL, -1, NULL};\n"
        "PyMODINIT_FUNC PyInit__core(void) { return PyModule_Create(&module); }\n")
    return folder


@pytest.mark.skipif(shutil.which(sysconfig.get_config_var("CC").split()[0]) is None, reason="no C compiler")
def test_rebuild_matches_its_settings(tmp_path):
    """A rebuild with a changed setting recompiles and relinks, one with the same settings does
    nothing (CPU-only builds, whose setting here is a C flag: the CUDA settings reach the same
    key, as test_build_key_changes_with_every_setting checks)."""
    project = small_project(tmp_path / "project")
    extension = tmp_path / "lib" / "gpuprims" / ("_core" + sysconfig.get_config_var("EXT_SUFFIX"))

    def build(cflags):
        environment = {**os.environ, "GPUPRIMS_DISABLE_CUDA": "1", "CFLAGS": cflags}
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-temp", str(tmp_path / "temp"),
                        "--build-lib", str(tmp_path / "lib")], cwd=project, env=environment, check=True,
                       capture_output=True)
        return extension.stat().st_mtime_ns

    first = build("-DGPUPRIMS_TEST_SETTING=1")
    second = build("-DGPUPRIMS_TEST_SETTING=2")
    assert second != first  # relinked (before, setuptools kept the first build: nothing was newer)
    assert build("-DGPUPRIMS_TEST_SETTING=2") == second  # the same settings: nothing rebuilt
