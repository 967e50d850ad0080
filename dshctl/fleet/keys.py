"""The key layout under the fleet prefix (docs/fleet.md).

``<prefix>/head``             the latest revision number (every publish rewrites it in the same txn)
``<prefix>/revisions/<N>``    revision N, a JSON document (revision.py); never rewritten, never deleted
``<prefix>/hosts/<ID>``       a host's report, under its lease: gone when the host dies
``<prefix>/members/<ID>``     a host that joined (no lease): a member without a report has expired
"""
from __future__ import annotations

from dshctl.errors import UsageError

DEFAULT_PREFIX = "/dshctl"


class Keys:
    def __init__(self, prefix: str = DEFAULT_PREFIX):
        if not prefix.startswith("/") or not prefix.strip("/") or not prefix.isprintable():
            raise UsageError(f"--prefix {prefix!r} must be a printable key path below /, like /dshctl",
                             hint="e.g. --prefix /dshctl")
        self.prefix = prefix.rstrip("/")

    @property
    def head(self) -> str:
        return f"{self.prefix}/head"

    def revision(self, number: int) -> str:
        return f"{self.prefix}/revisions/{number:012d}"   # zero-padded: a range lists them in order

    @property
    def revisions(self) -> str:
        return f"{self.prefix}/revisions/"

    def host(self, host_id: str) -> str:
        return f"{self.prefix}/hosts/{host_id}"

    @property
    def hosts(self) -> str:
        return f"{self.prefix}/hosts/"

    def member(self, host_id: str) -> str:
        return f"{self.prefix}/members/{host_id}"

    @property
    def members(self) -> str:
        return f"{self.prefix}/members/"


def check_host_id(host_id: str) -> str:
    if not host_id or "/" in host_id or not host_id.isprintable() or len(host_id) > 128:
        raise UsageError(f"--host-id {host_id!r} must be 1-128 printable characters without '/'",
                         hint="e.g. --host-id $(hostname)")
    return host_id
