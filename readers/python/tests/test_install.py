"""`pip install ./readers/python` gives a working package that needs nothing beyond the standard library."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def test_pip_install_into_an_empty_virtual_environment(tmp_path):
    # A copy, so that the build leaves nothing in the source tree.
    source = tmp_path / "source"
    shutil.copytree(PROJECT, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)],
                   check=True, timeout=300)
    installed = subprocess.run([python, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
                               capture_output=True, text=True, check=True).stdout
    names = {line.split("==")[0].lower() for line in installed.splitlines()}
    assert "pinkeeper" in names
    assert names <= {"pinkeeper", "pip", "setuptools", "wheel"}, names  # no run-time dependency came along
    cache = tmp_path / "cache"
    cache.mkdir()
    result = subprocess.run([python, "-I", "-m", "pinkeeper", "validate", "--cache-directory", str(cache),
                             "--store", "banking", "--name", "api.example.com",
                             "--fingerprint", "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 2 and result.stdout.startswith("empty: "), (result.stdout, result.stderr)
