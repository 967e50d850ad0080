"""The browser app's figures (issue 26): first render, asset size, and what 100 SSE clients cost.

    .venv/bin/python benchmarks/bench_webui.py [--clients 100] [--seconds 5]

Starts ``dshctl host run`` on a loop-agent home (scripted model, as the tests use) and
1. loads the page in Debian's chromium 10 times, reading the app's own ``dshctl-first-render``
   performance mark (ms after navigation start); prints the median and the worst;
2. prints the size of the shipped JS + CSS;
3. arms one session with /forever (turns back to back) and measures the host process's CPU time
   (/proc/<pid>/stat, user + system) over ``--seconds`` with no SSE client, then with ``--clients``
   clients on /api/status/events plus one on the session's chat stream, and prints both and the ratio.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.host.helpers import HostProcess, bundle_dir, write  # noqa: E402
from tests.agents.loop_agent_helpers import loop_agent_home  # noqa: E402


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def post(port: int, path: str, body: dict, token: str) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "X-Dshctl-Token": token},
                                     method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def first_renders(port: int, n: int = 10) -> list[float]:
    from playwright.sync_api import sync_playwright
    from tests.host.browser import launch
    with sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        out = []
        for _ in range(n):
            page.goto(f"http://127.0.0.1:{port}/")
            page.get_by_role("textbox", name="Message").wait_for()
            out.append(page.evaluate("performance.getEntriesByName('dshctl-first-render')[0].startTime"))
        browser.close()
    return out


async def sse_clients(port: int, n: int, session: str, seconds: float, pid: int) -> tuple[float, int]:
    import httpx
    received = 0

    async def follow(client, path):
        nonlocal received
        async with client.stream("GET", path) as feed:
            async for line in feed.aiter_lines():
                received += line.startswith("data: ")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=None,
                                 limits=httpx.Limits(max_connections=n + 5)) as client:
        tasks = [asyncio.ensure_future(follow(client, "/api/status/events")) for _ in range(n)]
        tasks.append(asyncio.ensure_future(follow(client, f"/api/chat/events?session={session}")))
        await asyncio.sleep(1.0)                      # all connected
        before = cpu_seconds(pid)
        await asyncio.sleep(seconds)
        used = cpu_seconds(pid) - before
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return used, received


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-webui-"))
    replies = [{"text": f"answer {i} " * 20, "delayMs": 50} for i in range(300)]   # ~15 s of turns
    home = loop_agent_home(tmp, replies, runner={"continuation": "go on", "quiet": True})
    patch = bundle_dir(home) / "cordis.patch.yml"
    write(patch, patch.read_text() + '    - {"id": "status-page", "name": "@dshctl/status-page"}\n')
    port = int(re.search(r'"port": (\d+)', patch.read_text()).group(1))
    with HostProcess(home) as host:
        renders = first_renders(port)
        print(f"first render: median {statistics.median(renders):.0f} ms, worst {max(renders):.0f} ms "
              f"(app mark after navigation start, {len(renders)} loads)")
        static = ROOT / "dshctl" / "host" / "web" / "static"
        size = sum((static / f).stat().st_size for f in ("app.js", "app.css"))
        print(f"JS + CSS shipped: {size / 1024:.1f} KiB uncompressed")
        token = (home / "profiles" / "p" / ".dshctl" / "http.token").read_text().strip()
        session = post(port, "/api/chat/send", {"session": None, "text": "/forever"}, token)["session"]
        time.sleep(1.0)
        pid = host.proc.pid
        before = cpu_seconds(pid)
        time.sleep(args.seconds)
        alone = cpu_seconds(pid) - before
        used, received = asyncio.run(sse_clients(port, args.clients, session, args.seconds, pid))
        print(f"host CPU over {args.seconds:g} s of back-to-back turns: {alone:.2f} s with no SSE client, "
              f"{used:.2f} s with {args.clients} status clients + 1 chat client "
              f"({(used / alone - 1) * 100 if alone else float('nan'):+.0f} %; {received} SSE messages received)")


if __name__ == "__main__":
    main()
