"""The npm registry protocol over HTTP(S) with httpx: packuments and tarballs.

httpx because it is already a dependency, pools connections (one TLS handshake per host for a whole
install), is safe to share between the fetch threads, and has separate connect/read timeouts.
Retries with exponential backoff on 5xx, 429 and timeouts; 404/401/403 fail at once.
The auth token goes into the ``Authorization`` header only; it never appears in a message.
"""
from __future__ import annotations

import json
import threading
import time
from typing import Callable
from urllib.parse import quote

from dshctl.bundles.npm.config import Config

ACCEPT = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"
Progress = Callable[[int], None]


class FetchFailed(Exception):
    """One line saying why a request failed; the caller adds package, range and bundle."""


def packument_url(registry: str, name: str) -> str:
    # npm escapes the slash of a scoped name: @scope%2fname
    return registry + (quote(name, safe="@") if name.startswith("@") else quote(name, safe=""))


class Registry:
    def __init__(self, config: Config):
        self.config = config
        self._clients: dict[str, httpx.Client] = {}
        self._lock = threading.Lock()
        self._packuments: dict[str, dict] = {}
        self._inflight: dict[str, threading.Event] = {}
        self._failed: dict[str, FetchFailed] = {}

    def client_for(self, url: str) -> "httpx.Client":  # noqa: F821
        """One pooled client per scheme, made on first use: building the TLS context (loading the
        CA bundle) costs ~150 ms of CPU, which a plain-http registry never needs."""
        import httpx  # here, not at import time: a run without npm work never pays for it

        scheme = "https" if url.startswith("https:") else "http"
        with self._lock:
            client = self._clients.get(scheme)
            if client is None:
                t = self.config.timeout
                client = self._clients[scheme] = httpx.Client(
                    timeout=httpx.Timeout(t, connect=min(t, 10.0)), follow_redirects=False,
                    verify=scheme == "https", trust_env=scheme == "https",
                    limits=httpx.Limits(max_connections=16, max_keepalive_connections=16),
                    headers={"user-agent": "dshctl (npm registry client)"})
            return client

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    def _headers(self, url: str, accept: str) -> dict[str, str]:
        headers = {"accept": accept}
        token = self.config.token_for(url)
        if token:
            headers["authorization"] = f"Bearer {token}"
        return headers

    def _get(self, url: str, accept: str, sink: Progress | None = None) -> bytes:
        import httpx

        attempts = self.config.retries + 1
        redirects = 0
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                with self.client_for(url).stream("GET", url,
                                                 headers=self._headers(url, accept)) as resp:
                    if resp.status_code in (301, 302, 303, 307, 308) and redirects < 5:
                        url = httpx.URL(url).join(resp.headers.get("location", "")).__str__()
                        redirects += 1
                        continue
                    if resp.status_code in (401, 403):
                        raise FetchFailed(f"the registry refused access (HTTP {resp.status_code}); "
                                          "check the _authToken for this registry in .npmrc")
                    if resp.status_code == 404:
                        raise FetchFailed("not found in the registry (HTTP 404)")
                    if resp.status_code >= 500 or resp.status_code == 429:
                        if last:
                            raise FetchFailed(f"the registry answered HTTP {resp.status_code} "
                                              f"{attempts} times")
                        _backoff(attempt)
                        continue
                    if resp.status_code != 200:
                        raise FetchFailed(f"unexpected HTTP {resp.status_code} from the registry")
                    chunks = []
                    for chunk in resp.iter_bytes():
                        chunks.append(chunk)
                        if sink:
                            sink(len(chunk))
                    return b"".join(chunks)
            except httpx.TimeoutException:
                if last:
                    raise FetchFailed(f"no answer within {self.config.timeout:g} s, "
                                      f"{attempts} times (fetch-timeout)") from None
            except httpx.HTTPError as exc:
                if last:
                    raise FetchFailed(f"cannot reach the registry ({type(exc).__name__})") from None
            _backoff(attempt)
        raise FetchFailed("too many redirects from the registry")

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
            doc = _parse_packument(name, self._get(
                packument_url(self.config.registry_for(name), name), ACCEPT))
            with self._lock:
                self._packuments[name] = doc
            return doc
        except FetchFailed as exc:
            with self._lock:
                self._failed[name] = exc
            raise
        finally:
            event.set()

    def tarball(self, url: str, sink: Progress | None = None) -> bytes:
        return self._get(url, "application/octet-stream, */*", sink)


def _backoff(attempt: int) -> None:
    time.sleep(min(2.0, 0.1 * (2 ** attempt)))


def _parse_packument(name: str, body: bytes) -> dict:
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise FetchFailed("the registry sent a packument that is not JSON") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("versions"), dict):
        raise FetchFailed("the registry sent a malformed packument (no \"versions\" object)")
    for version, manifest in doc["versions"].items():
        dist = manifest.get("dist") if isinstance(manifest, dict) else None
        if not isinstance(dist, dict) or not isinstance(dist.get("tarball"), str):
            raise FetchFailed(f"the registry sent a malformed packument ({version} has no "
                              "dist.tarball)")
    tags = doc.get("dist-tags")
    doc["dist-tags"] = tags if isinstance(tags, dict) else {}
    return doc
