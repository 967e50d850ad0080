"""A small etcd v3 client over etcd's JSON gRPC gateway (``/v3/kv/*``, ``/v3/watch``, ``/v3/lease/*``).

Why the gateway and not a PyPI client: the gateway is etcd's own documented HTTP mapping of the v3
API, stable since 3.4 (Debian's ``etcd-server`` is 3.4), and httpx is already a dependency; the
gRPC clients need grpcio and pinned protobuf versions. Keys and values travel base64-encoded, int64
fields as decimal strings. Only the fleet code imports this module (tests/test_cli_lazy.py).

Several endpoints may be given (a cluster): a request that cannot reach one tries the next.
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import AsyncIterator, Sequence

import httpx

from dshctl.errors import DshctlError

REQUEST_TIMEOUT_S = 3.0


class EtcdUnavailable(DshctlError):
    """No endpoint answered."""


class EtcdError(DshctlError):
    """etcd answered with a gRPC error (``code`` 5: not found, e.g. a lease that expired)."""

    NOT_FOUND = 5

    def __init__(self, message: str, *, code: int, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.code = code


def _json(response) -> dict | None:
    try:
        doc = response.json()
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def b64(text: str | bytes) -> str:
    raw = text.encode() if isinstance(text, str) else text
    return base64.b64encode(raw).decode("ascii")


def unb64(text: str | None) -> str:
    return base64.b64decode(text or "").decode("utf-8")


def prefix_end(prefix: str) -> str:
    """The ``range_end`` that makes a range cover every key starting with ``prefix``."""
    raw = bytearray(prefix.encode())
    raw[-1] += 1
    return b64(bytes(raw))


@dataclass
class KeyValue:
    key: str
    value: str
    mod_revision: int
    create_revision: int
    lease: int = 0

    @classmethod
    def of(cls, kv: dict) -> "KeyValue":
        return cls(unb64(kv.get("key")), unb64(kv.get("value")), int(kv.get("mod_revision", 0)),
                   int(kv.get("create_revision", 0)), int(kv.get("lease", 0)))


def split_endpoints(url: str) -> list[str]:
    """``http://a:1,http://b:2`` → both, without trailing slashes (a malformed one: UsageError)."""
    from urllib.parse import urlsplit

    from dshctl.errors import UsageError

    out = [u.strip().rstrip("/") for u in url.split(",") if u.strip()]
    if not out:
        raise UsageError("no etcd endpoint given", hint="e.g. --etcd http://127.0.0.1:2379")
    for u in out:
        try:
            parts = urlsplit(u)
            port = parts.port
        except ValueError:
            parts, port = None, None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or \
                (port is not None and not 0 < port < 65536) or parts.path not in ("", "/"):
            raise UsageError(f"etcd endpoint {u!r} is not an http:// or https:// URL of a host and port",
                             hint="e.g. --etcd http://127.0.0.1:2379 (several: comma-separated)")
    return out


class Etcd:
    """``async with Etcd(url) as etcd``: one connection pool over the endpoints."""

    def __init__(self, url: str | Sequence[str], *, timeout: float = REQUEST_TIMEOUT_S):
        self.endpoints = split_endpoints(url) if isinstance(url, str) else list(url)
        self.timeout = timeout
        self._client: httpx.AsyncClient | None = None
        self._preferred = 0   # the endpoint that answered last is tried first

    async def __aenter__(self) -> "Etcd":
        self._client = httpx.AsyncClient(timeout=self.timeout)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _order(self) -> list[int]:
        n = len(self.endpoints)
        return [(self._preferred + i) % n for i in range(n)]

    async def call(self, path: str, body: dict) -> dict:
        last = None
        for i in self._order():
            try:
                response = await self._client.post(self.endpoints[i] + path, json=body)
            except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
                last = exc
                continue
            doc = _json(response)
            if response.status_code >= 500 or doc is None:   # a member without quorum, or no gateway
                last = RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
                continue
            self._preferred = i
            if "code" in doc and "header" not in doc and "result" not in doc:
                raise EtcdError(f"etcd refused {path}: {doc.get('message') or doc.get('error')}",
                                code=int(doc.get("code") or 0),
                                hint="check the etcd cluster's health (etcdctl endpoint health)")
            return doc
        raise EtcdUnavailable(f"etcd is unreachable at {', '.join(self.endpoints)} ({last})",
                              hint="start etcd, or pass the right endpoints with --etcd URL[,URL…]")

    # ---- kv ----------------------------------------------------------------------------------
    async def get(self, key: str) -> KeyValue | None:
        doc = await self.call("/v3/kv/range", {"key": b64(key)})
        kvs = doc.get("kvs") or []
        return KeyValue.of(kvs[0]) if kvs else None

    async def get_prefix(self, prefix: str) -> list[KeyValue]:
        doc = await self.call("/v3/kv/range", {"key": b64(prefix), "range_end": prefix_end(prefix)})
        return [KeyValue.of(kv) for kv in doc.get("kvs") or []]

    async def put(self, key: str, value: str, *, lease: int = 0) -> int:
        body = {"key": b64(key), "value": b64(value)}
        if lease:
            body["lease"] = str(lease)
        doc = await self.call("/v3/kv/put", body)
        return int(doc["header"]["revision"])

    async def delete(self, key: str) -> None:
        await self.call("/v3/kv/deleterange", {"key": b64(key)})

    async def txn(self, compare: list, success: list, failure: list = ()) -> tuple[bool, dict]:
        doc = await self.call("/v3/kv/txn", {"compare": compare, "success": success,
                                             "failure": list(failure)})
        return bool(doc.get("succeeded")), doc

    # ---- leases ------------------------------------------------------------------------------
    async def grant(self, ttl: int) -> int:
        doc = await self.call("/v3/lease/grant", {"TTL": str(ttl)})
        return int(doc["ID"])

    async def keepalive(self, lease: int) -> bool:
        """One keep-alive; False when the lease is gone (expired while etcd was away)."""
        doc = await self.call("/v3/lease/keepalive", {"ID": str(lease)})
        return int((doc.get("result") or {}).get("TTL", 0)) > 0

    async def revoke(self, lease: int) -> None:
        await self.call("/v3/lease/revoke", {"ID": str(lease)})

    # ---- watch -------------------------------------------------------------------------------
    async def watch(self, key: str, start_revision: int) -> AsyncIterator[KeyValue]:
        """Every change of ``key`` from ``start_revision`` on, until the stream breaks (raises
        EtcdUnavailable then: the caller re-reads and watches again)."""
        body = {"create_request": {"key": b64(key), "start_revision": str(start_revision)}}
        last, started = None, False
        for i in self._order():
            try:
                async with self._client.stream("POST", self.endpoints[i] + "/v3/watch", json=body,
                                               timeout=httpx.Timeout(self.timeout, read=None)) as response:
                    if response.status_code != 200:
                        last = RuntimeError(f"HTTP {response.status_code}")
                        continue
                    self._preferred, started = i, True
                    async for kv in _events(response, key):
                        yield kv
            except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
                last = exc
                if started:
                    break   # the stream had started: the caller re-reads rather than replay events
                continue
            break
        raise EtcdUnavailable(f"the watch on {key} ended ({last or 'stream closed'})")


async def _events(response, key: str) -> AsyncIterator[KeyValue]:
    async for line in response.aiter_lines():
        if not line.strip():
            continue
        result = json.loads(line).get("result") or {}
        if result.get("canceled"):
            raise EtcdUnavailable(f"etcd canceled the watch on {key}: {result.get('cancel_reason', '')}")
        for event in result.get("events") or []:
            if event.get("type", "PUT") == "PUT":
                yield KeyValue.of(event["kv"])


def compare_mod(key: str, mod_revision: int) -> dict:
    """A txn compare: ``key`` was last written at ``mod_revision`` (0: the key does not exist)."""
    return {"key": b64(key), "target": "MOD", "result": "EQUAL", "mod_revision": str(mod_revision)}


def put_op(key: str, value: str) -> dict:
    return {"request_put": {"key": b64(key), "value": b64(value)}}


def range_op(key: str) -> dict:
    return {"request_range": {"key": b64(key)}}
