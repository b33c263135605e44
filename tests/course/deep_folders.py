"""Folders nested too deep for recursion (and for PATH_MAX): made and removed one level at a time."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def make_deep(parent: Path, levels: int, name: str = "a", leaf: str = "") -> Path:
    """``parent/name/name/…`` ``levels`` deep (beyond PATH_MAX if need be), with a file ``leaf`` at the bottom."""
    parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=descriptor)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = child
        if leaf:
            handle = os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=descriptor)
            os.write(handle, b"X = 1\n")
            os.close(handle)
    finally:
        os.close(descriptor)
    return parent / name


def remove_deep(top: Path) -> None:
    """Remove a folder of any depth without recursion (shutil.rmtree recurses, and fails past ~1000 levels)."""
    if not top.exists():
        return
    chain = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    names: list[str] = []
    try:
        while True:
            current = chain[-1]
            entries = os.listdir(current)
            folder = None
            for entry in entries:
                info = os.stat(entry, dir_fd=current, follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    folder = entry
                    break
                os.unlink(entry, dir_fd=current)
            if folder is not None:
                chain.append(os.open(folder, os.O_RDONLY | os.O_DIRECTORY, dir_fd=current))
                names.append(folder)
                continue
            if len(chain) == 1:
                break
            os.close(chain.pop())
            os.rmdir(names.pop(), dir_fd=chain[-1])
    finally:
        for descriptor in chain:
            os.close(descriptor)
    os.rmdir(top)
