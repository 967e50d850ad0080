"""A ConfigMap volume laid out and updated exactly as the kubelet's atomic writer does it.

The mounted directory holds one timestamped directory with the files (``..2026_12_03_10_00_00.123``),
``..data`` -> that directory (a symlink), and each visible file ``name -> ..data/name`` (a symlink). An
update writes a new timestamped directory, points ``..data_tmp`` at it, renames ``..data_tmp`` over
``..data`` (the atomic step), then removes the old timestamped directory.
"""
from __future__ import annotations

import itertools
import os
import shutil
import time
from pathlib import Path

_serial = itertools.count(123)


def _generation_name() -> str:
    # the kubelet's name: a UTC timestamp and a unique suffix (os.MkdirTemp's random digits)
    return time.strftime("..%Y_%m_%d_%H_%M_%S", time.gmtime()) + f".{next(_serial)}"


class ConfigMapVolume:
    def __init__(self, directory: Path, files: dict[str, str]):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.generation = self._write_generation(files)
        os.symlink(self.generation, self.directory / "..data")
        for name in files:
            os.symlink(f"..data/{name}", self.directory / name)

    def _write_generation(self, files: dict[str, str]) -> str:
        name = _generation_name()
        target = self.directory / name
        target.mkdir(mode=0o755)
        for key, text in files.items():
            (target / key).write_text(text)
        return name

    def swap(self, files: dict[str, str]) -> str:
        """Steps 1-3 of an update: new generation, ``..data_tmp``, rename over ``..data``. Returns the
        old generation's name (still on disk until :meth:`remove`)."""
        new = self._write_generation(files)
        os.symlink(new, self.directory / "..data_tmp")
        os.rename(self.directory / "..data_tmp", self.directory / "..data")
        old, self.generation = self.generation, new
        return old

    def remove(self, generation: str) -> None:
        """The last step: the kubelet removes the old timestamped directory."""
        shutil.rmtree(self.directory / generation)

    def update(self, files: dict[str, str]) -> None:
        self.remove(self.swap(files))
