"""pyproject.toml builds without deprecation warnings: the license is an SPDX expression (a
``{text = ...}`` table stops building with setuptools on 2027-02-18), and the build backend is
one that reads it."""

from __future__ import annotations

from pathlib import Path

from packaging.licenses import canonicalize_license_expression
from packaging.requirements import Requirement

from fuzzer.datafiles import read_toml

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _pyproject() -> dict:
    return read_toml(PYPROJECT, lambda reason: AssertionError(reason))


def test_the_license_is_an_spdx_expression():
    license_ = _pyproject()["project"]["license"]
    assert isinstance(license_, str), f"project.license must be an SPDX string, not {license_!r}"
    assert canonicalize_license_expression(license_) == license_


def test_the_build_backend_reads_an_spdx_license():
    # setuptools reads project.license as an SPDX string from 77.0 on; an older one would be picked
    (setuptools,) = [Requirement(r) for r in _pyproject()["build-system"]["requires"]
                     if Requirement(r).name == "setuptools"]
    assert not setuptools.specifier.contains("76.1") and setuptools.specifier.contains("77.0")
