"""The browser app's figures (issue 26): first render, asset size, and what 100 SSE clients cost.

    .venv/bin/python benchmarks/bench_webui.py [--clients 100] [--seconds 5]

Starts ``dshctl host run`` on a loop-agent home (scripted model, as the tests use) and
1. loads the page in Debian's chromium 10 times, reading the app's own ``dshctl-first-render``
   performance mark (ms after navigation start); prints the median and the worst;
2. prints the size of the shipped JS + CSS;
3. arms one session with /forever (turns back to back, a streamed reply every ~50 ms) and, opening
   the session's chat in the browser, records for every streamed chunk event how long after the host
   logged it (the event's ``time``) the page's EventSource had it: median, p95, worst;
4. measures the host process's CPU time (/proc/<pid>/stat, user + system) over ``--seconds`` windows,
   alternating no SSE client and ``--clients`` clients on /api/status/events plus one on the session's
   chat stream (``--rounds`` of the latter, each between two of the former); each window with clients
   is compared with the mean of the two around it (the host's own cost grows as the session does, and
   the machine is shared), and the median change is printed.
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


def scripted_loop_home(tmp: Path, turns: int) -> Path:
    """The loop-agent home on a scripted model whose replies are a script file, as a real llm row's
    config is small (inline, 4,000 replies made the status document 0.8 MB: docs/performance.md)."""
    replies = [{"text": f"answer {i} " * 20, "delayMs": 50} for i in range(turns)]
    home = loop_agent_home(tmp, None, script="plugins/replies.json", runner={"continuation": "go on", "quiet": True})
    write(bundle_dir(home) / "plugins" / "replies.json", json.dumps(replies))
    return home


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


TOKEN_PROBE = """async (id) => {
  const lags = [], start = Date.now();
  const feed = new EventSource(`/api/chat/events?session=${encodeURIComponent(id)}`);
  let live = false;
  feed.onmessage = (m) => {
    const now = Date.now(), item = JSON.parse(m.data);
    if (item.type === "agent") { live = true; return; }
    const events = item.type === "events" ? item.events : item.type === "event" ? [item.event] : [];
    if (!live) return;
    for (const e of events) if (/chunk|delta/.test(e.type) && e.time >= start) lags.push(now - e.time);  // not the log so far
  };
  await new Promise((done) => setTimeout(done, SECONDS * 1000));
  feed.close();
  return lags;
}"""


def token_lags(port: int, session: str, seconds: float) -> list[float]:
    from playwright.sync_api import sync_playwright
    from tests.host.browser import launch
    with sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        lags = page.evaluate(TOKEN_PROBE.replace("SECONDS", repr(seconds)), session)
        browser.close()
    return sorted(lags)


def raw_lags(port: int, session: str, seconds: float, out: list) -> None:
    """The same chunk events read by a plain blocking socket (no browser): the host's own share."""
    import socket
    start = time.time() * 1000
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(f"GET /api/chat/events?session={session} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        sock.settimeout(0.5)
        buffer, deadline = b"", time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                data = sock.recv(65536)
            except socket.timeout:
                continue
            now = time.time() * 1000
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                for match in re.finditer(rb'"type": "assistant/chunk", "seq": \d+, "time": (\d+)', line):
                    if int(match.group(1)) >= start:
                        out.append(now - int(match.group(1)))


def lag_line(what: str, lags: list[float]) -> str:
    lags = sorted(lags)
    if not lags:
        return f"{what}: no chunk event seen"
    over = sum(1 for x in lags if x > 20)
    return (f"{what}: median {statistics.median(lags):.0f} ms, p95 {lags[int(len(lags) * 0.95)]:.0f} ms, "
            f"p99 {lags[int(len(lags) * 0.99)]:.0f} ms, worst {lags[-1]:.0f} ms, {over} over 20 ms ({len(lags)} chunks)")


def main() -> None:
    if sys.argv[1:2] == ["--raw-reader"]:
        out: list[float] = []
        raw_lags(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), out)
        print(json.dumps(out))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--probe-seconds", type=float, default=3.0, help="how long the token latency probe listens")
    parser.add_argument("--latency-only", action="store_true", help="stop after the token latency figures")
    parser.add_argument("--base-chat", action="store_true",
                        help="the windows to compare with have one chat client too (the page open on the "
                             "session): measures what the --clients status clients add to it")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-webui-"))
    home = scripted_loop_home(tmp, 4000)
    patch = bundle_dir(home) / "cordis.patch.yml"
    write(patch, patch.read_text() + '    - {"id": "status-page", "name": "@dshctl/status-page"}\n')
    port = int(re.search(r'"port": (\d+)', patch.read_text()).group(1))
    with HostProcess(home) as host:
        renders = first_renders(port)
        print(f"first render: median {statistics.median(renders):.0f} ms, worst {max(renders):.0f} ms "
              f"(app mark after navigation start, {len(renders)} loads)")
        static = ROOT / "dshctl" / "host" / "web" / "static"
        size = sum((static / f).stat().st_size for f in ("app.js", "chat.js", "transcript.js", "app.css"))
        print(f"JS + CSS shipped: {size / 1024:.1f} KiB uncompressed")
        token = (home / "profiles" / "p" / ".dshctl" / "http.token").read_text().strip()
        session = post(port, "/api/chat/send", {"session": None, "text": "/forever"}, token)["session"]
        time.sleep(1.0)
        import subprocess   # the plain reader in its own process: not behind this one's Playwright driver
        reader = subprocess.Popen([sys.executable, __file__, "--raw-reader", str(port), session,
                                   str(args.probe_seconds + 1)], stdout=subprocess.PIPE, text=True)
        lags = token_lags(port, session, args.probe_seconds)
        raw = json.loads(reader.communicate()[0])
        print(lag_line("streamed chunk, host log -> page EventSource (chromium)", lags))
        print(lag_line("streamed chunk, host log -> a plain socket reader (same time)", raw))
        if args.latency_only:
            return
        pid = host.proc.pid
        # alone, with, alone, with, ..., alone: each "with" is compared with the mean of the two
        # "alone" windows around it (the host's own cost drifts as the session grows)
        alones, useds, ratios = [], [], []
        for i in range(args.rounds + 1):
            if args.base_chat:
                alones.append(asyncio.run(sse_clients(port, 0, session, args.seconds, pid))[0])
            else:
                before = cpu_seconds(pid)
                time.sleep(args.seconds)
                alones.append(cpu_seconds(pid) - before)
            if i:
                ratios.append(useds[-1] / ((alones[-2] + alones[-1]) / 2))
                print(f"  {alones[-2]:.2f} s alone, {useds[-1]:.2f} s with clients ({received} SSE messages), "
                      f"{alones[-1]:.2f} s alone: {(ratios[-1] - 1) * 100:+.0f} %")
            if i < args.rounds:
                used, received = asyncio.run(sse_clients(port, args.clients, session, args.seconds, pid))
                useds.append(used)
        alone, used = statistics.median(alones), statistics.median(useds)
        print(f"host CPU over {args.seconds:g} s of back-to-back turns (medians of {args.rounds}): {alone:.2f} s "
              f"with {'1 chat client' if args.base_chat else 'no SSE client'}, {used:.2f} s with {args.clients} status clients + 1 chat client; "
              f"median change {(statistics.median(ratios) - 1) * 100:+.0f} %; load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
