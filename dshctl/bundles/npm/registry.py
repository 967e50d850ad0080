"""The npm registry protocol over HTTP(S): packuments and tarballs.

The client is http_pool.py (the standard library's ``http.client`` with a keep-alive pool per
origin, shared by the fetch threads, connect/read timeouts and a total deadline per request):
httpx did the same at twice the start-up cost. Retries with exponential backoff on 5xx, 429 and
timeouts; 404/401/403 fail at once.
The auth token goes into the ``Authorization`` header only; it never appears in a message.
Packuments go through the HTTP cache in the store (cache.py): a fresh one costs no request (and a
run that needs no request never imports the HTTP client), a stale one is revalidated (304).
"""
from __future__ import annotations

import json
import threading
import time
from typing import Callable
from urllib.parse import quote, urljoin

from dshctl.bundles.npm.cache import Entry, PackumentCache, from_response
from dshctl.bundles.npm.config import Config

ACCEPT = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"
Progress = Callable[[int], None]
MB = 1024 * 1024


class FetchFailed(Exception):
    """One line saying why a request failed; the caller adds package, range and bundle."""


def packument_url(registry: str, name: str) -> str:
    # npm escapes the slash of a scoped name: @scope%2fname
    return registry + (quote(name, safe="@") if name.startswith("@") else quote(name, safe=""))


class Registry:
    def __init__(self, config: Config, *, cache: PackumentCache | None = None,
                 policy: str = "default"):
        self.config = config
        self.cache = cache
        self.policy = policy  # cache.POLICIES
        self.requests = 0  # HTTP requests made (packuments and tarballs)
        self._pending: dict[str, tuple[str, Entry]] = {}  # url -> (name, entry) to write
        self._pool = None  # http_pool.Pool, made by the first request
        self._lock = threading.Lock()
        self._packuments: dict[str, dict] = {}
        self._inflight: dict[str, threading.Event] = {}
        self._failed: dict[str, FetchFailed] = {}
        self.max_packument_bytes: int | None = 64 * MB  # set from Limits by deps.NpmContext
        self.max_tarball_bytes: int | None = None

    def pool(self) -> "http_pool.Pool":  # noqa: F821
        """Made on first use, so a run that needs no request never imports ``http.client``."""
        with self._lock:
            if self._pool is None:
                from dshctl.bundles.npm import http_pool

                self._pool = http_pool.Pool(self.config.timeout)
            return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def _headers(self, url: str, accept: str) -> dict[str, str]:
        headers = {"accept": accept}
        token = self.config.token_for(url)
        if token:
            headers["authorization"] = f"Bearer {token}"
        return headers

    def _get(self, url: str, accept: str, sink: Progress | None = None,
             conditional: dict[str, str] | None = None, *, max_bytes: int | None = None,
             what: str = "answer", write: Callable[[bytes], None] | None = None,
             restart: Callable[[], None] | None = None) -> tuple[int, object, bytes]:
        """(status, headers, body) of a 200, or of a 304 when ``conditional`` validators were
        sent; every other answer raises FetchFailed. With ``write`` the body goes there as it
        arrives (``restart`` empties it before a retry) and is not kept; past ``max_bytes`` the
        answer is refused while it streams."""
        from dshctl.bundles.npm.http_pool import Refused, Timeout, TransportError

        pool = self.pool()
        attempts = self.config.retries + 1
        redirects = 0
        stop_at = time.monotonic() + self.config.deadline
        for attempt in range(attempts):
            last = attempt == attempts - 1 or time.monotonic() >= stop_at
            if restart is not None:
                restart()
            try:
                headers = {**self._headers(url, accept), **(conditional or {})}
                with self._lock:
                    self.requests += 1
                with pool.get(url, headers, stop_at) as resp:
                    if resp.status == 304 and conditional:
                        return 304, resp.headers, b""
                    if resp.status in (301, 302, 303, 307, 308) and redirects < 5:
                        url = urljoin(url, resp.headers.get("location", ""))
                        redirects += 1
                        continue
                    if resp.status in (401, 403, 404):
                        raise _refusal(resp.status)
                    if resp.status >= 500 or resp.status == 429:
                        if last:
                            raise FetchFailed(f"the registry answered HTTP {resp.status} "
                                              f"{attempts} times")
                        _backoff(attempt, stop_at)
                        continue
                    if resp.status != 200:
                        raise FetchFailed(f"unexpected HTTP {resp.status} from the registry")
                    return 200, resp.headers, _body(resp, sink, max_bytes, what, write)
            except TooBig:
                raise
            except Timeout:
                if last or time.monotonic() >= stop_at:
                    raise self._timed_out(url, attempt, stop_at) from None
            except Refused as exc:
                raise FetchFailed(f"not sent to the registry {_origin(url)}: {exc} (a space, a "
                                  "control or a non-ASCII character; check .npmrc and the "
                                  "packument's URLs)") from None
            except TransportError as exc:
                if last:
                    raise FetchFailed(f"cannot reach the registry {_origin(url)} ({exc})") from None
            _backoff(attempt, stop_at)
        raise FetchFailed("too many redirects from the registry")

    def _timed_out(self, url: str, attempt: int, stop_at: float) -> FetchFailed:
        if time.monotonic() >= stop_at:
            return FetchFailed(f"no answer within {self.config.deadline:g} s from {_origin(url)} "
                               f"(fetch-deadline, the whole request: {attempt + 1} attempt(s)); it "
                               "sends too slowly or not at all")
        return FetchFailed(f"no answer within {self.config.timeout:g} s from {_origin(url)}, "
                           f"{attempt + 1} times (fetch-timeout)")

    def packument(self, name: str) -> dict:
        """The (abbreviated) packument of ``name``; fetched once per run, shared by threads."""
        with self._lock:
            if name in self._packuments:
                return self._packuments[name]
            if name in self._failed:
                raise self._failed[name]
            event = self._inflight.get(name)
            owner = event is None
            if owner:
                event = self._inflight[name] = threading.Event()
        if not owner:
            event.wait()
            with self._lock:
                if name in self._packuments:
                    return self._packuments[name]
                raise self._failed.get(name) or FetchFailed("the packument could not be fetched")
        try:
            doc = self._fetch_packument(name)
            with self._lock:
                self._packuments[name] = doc
            return doc
        except FetchFailed as exc:
            with self._lock:
                self._failed[name] = exc
            raise
        finally:
            event.set()

    def cached(self, name: str) -> dict | None:
        """The packument when the cache may answer for it without a request (by the policy),
        else None; the resolver asks this first, so a fully cached run starts no thread."""
        with self._lock:
            if name in self._packuments:
                return self._packuments[name]
        entry = self._usable_entry(packument_url(self.config.registry_for(name), name))
        if entry is None or not entry[1]:
            return None
        with self._lock:
            return self._packuments.setdefault(name, entry[0].body)

    def _usable_entry(self, url: str) -> tuple[Entry, bool] | None:
        """(cache entry, whether it answers without a request), or None when there is none."""
        cached = self.cache.get(url, ACCEPT) if self.cache else None
        if cached is None or not _valid(cached.body):
            return None  # missing or damaged: fetched again
        return cached, self.policy in ("offline", "prefer-offline") or \
            self.policy == "default" and cached.fresh()

    def _fetch_packument(self, name: str) -> dict:
        """Through the HTTP cache, by the policy (cache.py)."""
        url = packument_url(self.config.registry_for(name), name)
        usable = self._usable_entry(url)
        cached = usable[0] if usable else None
        if usable and usable[1]:
            return cached.body
        if self.policy == "offline":
            raise FetchFailed("offline: its packument is not in the store's cache")
        status, headers, body = self._get(url, ACCEPT, conditional=cached.validators()
                                          if cached is not None else None,
                                          max_bytes=self.max_packument_bytes, what="packument")
        if status == 304:
            entry: Entry | None = cached.renewed(headers)
            doc = cached.body
        else:
            doc = _parse_packument(name, body)
            entry = from_response(url, ACCEPT, doc, headers)
        if entry is not None and self.cache is not None:
            with self._lock:
                self._pending[url] = (name, entry)
        return doc

    def save_cache(self, before_write: Callable[[str], None] | None = None) -> None:
        """Write the packuments fetched or revalidated by this run into the cache, in this thread
        and in a fixed order (so the fault walk sees the same writes every run)."""
        with self._lock:
            pending = sorted(self._pending.items())
            self._pending.clear()
        for _url, (name, entry) in pending:
            if before_write:
                before_write(f"store packument {name}")
            try:
                self.cache.put(entry)
            except OSError:
                pass  # a cache that cannot be written only costs the next run a request

    def tarball(self, url: str, sink: Progress | None = None) -> bytes:
        if self.policy == "offline":
            raise FetchFailed("offline: the tarball is not in the store")
        return self._get(url, "application/octet-stream, */*", sink,
                         max_bytes=self.max_tarball_bytes, what="tarball")[2]

    def tarball_to(self, url: str, dest, sink: Progress | None = None) -> int:
        """Stream the tarball into the new file ``dest`` (never whole in memory); its size."""
        if self.policy == "offline":
            raise FetchFailed("offline: the tarball is not in the store")
        import os

        fd = os.open(dest, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as out:
            def restart() -> None:
                out.seek(0)
                out.truncate()
            self._get(url, "application/octet-stream, */*", sink, max_bytes=self.max_tarball_bytes,
                      what="tarball", write=out.write, restart=restart)
            return out.tell()


def _refusal(status: int) -> FetchFailed:
    if status == 404:
        return FetchFailed("not found in the registry (HTTP 404)")
    return FetchFailed(f"the registry refused access (HTTP {status}); check the _authToken for "
                       "this registry in .npmrc")


class TooBig(FetchFailed):
    """An answer past its size cap: refused at once, never retried."""


def _body(resp, sink: Progress | None, max_bytes: int | None, what: str,
          write: Callable[[bytes], None] | None) -> bytes:
    """The body, counted against ``max_bytes`` (the announced length first, then what arrives)."""
    def too_big(size: str) -> TooBig:
        flag = "--max-package-mb" if what == "tarball" else "--max-packument-mb"
        return TooBig(f"the {what} is {size} the limit of {max_bytes / MB:g} MB ({flag} "
                      "raises it)")
    if max_bytes is not None:
        try:
            announced = int(resp.headers.get("content-length", ""))
        except ValueError:
            announced = None
        if announced is not None and announced > max_bytes:
            raise too_big(f"{announced / MB:.1f} MB, over")
    chunks: list[bytes] = []
    received = 0
    for chunk in resp.iter_bytes():
        received += len(chunk)
        if max_bytes is not None and received > max_bytes:
            raise too_big("larger than")
        if write is not None:
            write(chunk)
        else:
            chunks.append(chunk)
        if sink:
            sink(len(chunk))
    return b"".join(chunks)


def _backoff(attempt: int, stop_at: float | None = None) -> None:
    pause = min(2.0, 0.1 * (2 ** attempt))
    if stop_at is not None:
        pause = max(0.0, min(pause, stop_at - time.monotonic()))
    time.sleep(pause)


def _origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL, without credentials: which registry, in messages."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")


def _valid(doc: object) -> bool:
    try:
        _check_packument(doc)
    except FetchFailed:
        return False
    return True


def _parse_packument(name: str, body: bytes) -> dict:
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise FetchFailed("the registry sent a packument that is not JSON") from None
    _check_packument(doc)
    return doc


def _check_packument(doc) -> None:
    if not isinstance(doc, dict) or not isinstance(doc.get("versions"), dict):
        raise FetchFailed("the registry sent a malformed packument (no \"versions\" object)")
    for version, manifest in doc["versions"].items():
        dist = manifest.get("dist") if isinstance(manifest, dict) else None
        if not isinstance(dist, dict) or not isinstance(dist.get("tarball"), str):
            raise FetchFailed(f"the registry sent a malformed packument ({version} has no "
                              "dist.tarball)")
    tags = doc.get("dist-tags")
    doc["dist-tags"] = tags if isinstance(tags, dict) else {}
