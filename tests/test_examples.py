"""The examples (run as a user runs them) and the package's import error in a source tree."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gpuprims

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason="needs the source tree's examples/")


def run(script, *args, cwd=None):
    """Runs an example with the gpuprims under test (its folder first on the path)."""
    environment = {**os.environ, "PYTHONPATH": str(Path(gpuprims.__file__).parent.parent), "GPUPRIMS_DEVICE": "cpu"}
    return subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                          env=environment, cwd=cwd or EXAMPLES)


@needs_examples
@pytest.mark.parametrize("script", ["quickstart.py", "pipeline.py"])
def test_example_help(script):
    result = run(script, "--help")
    assert result.returncode == 0 and result.stdout.startswith("usage:"), result.stderr
    assert "build info" not in result.stdout  # helped, did not run


@needs_examples
@pytest.mark.parametrize("args, message", [
    (["--window", "-1"], "--window: must be at least 1, not -1"),
    (["--window", "0"], "--window: must be at least 1, not 0"),
    (["--sensors", "0"], "--sensors: must be at least 1, not 0"),
    (["--samples", "0"], "--samples: must be at least 1, not 0"),
    (["--samples", "x"], "'x' is not an integer"),
    (["--samples", "10", "--window", "11"], "--window 11 is longer than the recording"),
    (["--device", "gpu"], "--device gpu: unknown device"),
])
def test_pipeline_refuses_bad_arguments(args, message):
    result = run("pipeline.py", *args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr, result.stderr


@needs_examples
@pytest.mark.parametrize("command", [["quickstart.py"], ["pipeline.py"],
                                     ["pipeline.py", "--sensors", "1", "--samples", "7", "--window", "7"]])
def test_examples_run(command):
    result = run(*command)
    assert result.returncode == 0, result.stderr


def test_import_from_a_source_tree_says_to_install(tmp_path):
    """A gpuprims package folder without its compiled core (a checkout's) explains itself."""
    shutil.copytree(Path(gpuprims.__file__).parent, tmp_path / "gpuprims",
                    ignore=shutil.ignore_patterns("_core.*", "__pycache__"))
    result = subprocess.run([sys.executable, "-c", "import gpuprims"], capture_output=True, text=True,
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""})
    assert result.returncode == 1
    assert "compiled core is missing" in result.stderr and "pip install -e ." in result.stderr, result.stderr
