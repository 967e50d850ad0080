"""Landlock through the kernel's own system calls (ctypes; no binding on PyPI is small and kept up).

Landlock is an allow-list the calling process puts on itself and every descendant: once restricted, a
file access is allowed only beneath a granted directory with the granted rights, and (ABI 4+) TCP bind
and connect only to granted ports (we grant none when the network is off). Independently of the rules,
a Landlock-confined process cannot ptrace — and so cannot read ``/proc/<pid>/environ`` or ``mem`` of —
any process outside its domain, and (ABI 6+, ``scoped``) cannot signal one or reach its abstract unix
sockets. This module is imported by the launcher (a ``python3 -I -S`` script), so it imports only the
standard library.
"""
from __future__ import annotations

import ctypes
import os
import struct

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446      # the same on every arch
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV      # the rights a file (not dir) takes
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR | IOCTL_DEV


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI (0: not offered — not built in, or disabled at boot)."""
    try:
        libc = _libc()
    except OSError:
        return 0
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                           ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(version), 0)


def handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1                          # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class LandlockError(OSError):
    pass


def build_ruleset(read: list[str], write: list[str], *, network: bool, abi: int) -> int:
    """A ruleset fd granting ``read`` (read + execute) and ``write`` (everything) beneath each path;
    with ``network`` False, TCP bind/connect are handled and granted nowhere. Paths that do not exist
    are skipped (they grant nothing until they exist — the conservative end)."""
    if abi < 1:
        raise LandlockError("Landlock is not offered by this kernel")
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    fs = handled_fs(abi)
    net = (NET_BIND_TCP | NET_CONNECT_TCP) if (abi >= 4 and not network) else 0
    scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("=QQQ", fs, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", fs, net)
    else:
        attr = struct.pack("=Q", fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    fd = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if fd < 0:
        raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for paths, rights in ((read, READ_RIGHTS), (write, fs)):
            for path in paths:
                _add_path(libc, fd, path, rights & fs)
    except BaseException:
        os.close(fd)
        raise
    return fd


def add_path(ruleset: int, path: str, rights: int) -> None:
    _add_path(_libc(), ruleset, path, rights)


def _add_path(libc, ruleset: int, path: str, rights: int) -> None:
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(f"/proc/self/fd/{target}"):
            rights &= FILE_RIGHTS
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, target), 12)     # packed struct
        if libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                        rule, ctypes.c_uint32(0)) < 0:
            raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(target)


def restrict_self(ruleset: int) -> None:
    """Put this process (and all it will start) under ``ruleset``; irreversible."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise LandlockError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
        raise LandlockError(ctypes.get_errno(), "landlock_restrict_self failed")


def launcher_args(spec: dict) -> list[str]:
    """The launcher's arguments for ``spec`` (``abi``, ``network``, ``read``, ``write``): the host
    builds them here, ``launcher.parse`` reads them back."""
    return [str(spec["abi"]), "1" if spec["network"] else "0", str(len(spec["read"])), *spec["read"],
            str(len(spec["write"])), *spec["write"]]
