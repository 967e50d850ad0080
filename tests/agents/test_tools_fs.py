"""@dshctl/fs-tools on real files: the workspace root holds (.., absolute paths, symlinks), results and
errors are readable, and writes are parallel-safe only for disjoint paths."""
import os

from dshctl.agents.tools.definition import conflict
from dshctl.agents.tools.fs import FsTools
from dshctl.agents.tools.pipeline import dispatch
from dshctl.agents.tools.workspace import Workspace
from tests.agents.loop_helpers import BareAgent, call, runtime_with_tools
from tests.host.helpers import run_async, write

CONFIG = {"maxBytes": 64, "maxMatches": 3}


def agent_on(root):
    ctx, registry = runtime_with_tools()
    fs = FsTools(Workspace(root), CONFIG)
    tools = {t.name: t for t in fs.definitions(write=True)}
    for tool in tools.values():
        registry.register(ctx, tool.name, tool)
    return BareAgent(ctx, registry), tools


def text(result):
    return result["content"][0]["text"]


@run_async()
async def test_read_list_search_write(tmp_path):
    root = tmp_path / "ws"
    write(root / "a.txt", "one\ntwo\nthree\n")
    write(root / "sub" / "b.md", "two again\n")
    agent, _ = agent_on(root)
    assert text(await dispatch(agent, call("read_file", {"path": "a.txt"}), turn=1, step=1)) == "one\ntwo\nthree\n"
    assert text(await dispatch(agent, call("read_file", {"path": "a.txt", "startLine": 2, "endLine": 2}),
                               turn=1, step=1)) == "two\n"
    assert text(await dispatch(agent, call("list_dir", {}), turn=1, step=1)) == "a.txt\nsub/"
    assert text(await dispatch(agent, call("search", {"pattern": "two"}), turn=1, step=1)) == \
        "a.txt:2: two\nsub/b.md:1: two again"
    result = await dispatch(agent, call("write_file", {"path": "new/c.txt", "content": "héllo"}), turn=1, step=1)
    assert text(result) == "wrote 6 bytes to new/c.txt" and (root / "new" / "c.txt").read_text() == "héllo"


@run_async()
async def test_paths_outside_the_root_are_refused(tmp_path):
    root = tmp_path / "ws"
    write(root / "in.txt", "in\n")
    write(tmp_path / "secret.txt", "secret\n")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    agent, _ = agent_on(root)
    for path in ("../secret.txt", str(tmp_path / "secret.txt"), "link.txt", "sub/../../secret.txt"):
        result = await dispatch(agent, call("read_file", {"path": path}), turn=1, step=1)
        assert result["isError"] and result["error"]["code"] == "PATH_OUTSIDE_WORKSPACE", path
    result = await dispatch(agent, call("write_file", {"path": "../evil.txt", "content": "x"}), turn=1, step=1)
    assert result["error"]["code"] == "PATH_OUTSIDE_WORKSPACE" and not (tmp_path / "evil.txt").exists()
    assert "secret" not in text(await dispatch(agent, call("search", {"pattern": "secret"}), turn=1, step=1))


@run_async()
async def test_errors_name_the_problem(tmp_path):
    root = tmp_path / "ws"
    write(root / "big.txt", "x" * 100 + "\n")
    write(root / "bin.dat", "")
    (root / "bin.dat").write_bytes(b"\xff\xfe\x00")
    agent, _ = agent_on(root)
    cases = {("read_file", "missing.txt"): "PATH_NOT_FOUND", ("read_file", "big.txt"): "FILE_TOO_LARGE",
             ("read_file", "bin.dat"): "NOT_TEXT", ("read_file", "."): "PATH_IS_DIRECTORY",
             ("list_dir", "big.txt"): "PATH_NOT_DIRECTORY"}
    for (tool, path), code in cases.items():
        result = await dispatch(agent, call(tool, {"path": path}), turn=1, step=1)
        assert result["error"]["code"] == code, (tool, path, result)
    result = await dispatch(agent, call("search", {"pattern": "("}), turn=1, step=1)
    assert result["error"]["code"] == "BAD_PATTERN"


def test_footprints_make_writes_parallel_only_for_disjoint_paths(tmp_path):
    _, tools = agent_on(tmp_path)
    write_a = tools["write_file"].touches({"path": "a.txt"})
    write_b = tools["write_file"].touches({"path": "b.txt"})
    read_a = tools["read_file"].touches({"path": "./a.txt"})
    list_root = tools["list_dir"].touches({})
    search_sub = tools["search"].touches({"pattern": "x", "path": "sub"})
    write_sub = tools["write_file"].touches({"path": "sub/x.txt"})
    assert conflict(write_a, write_a) and conflict(write_a, read_a) and conflict(list_root, write_a)
    assert conflict(search_sub, write_sub)
    assert not conflict(write_a, write_b) and not conflict(read_a, read_a) and not conflict(write_b, search_sub)
    assert all(t.parallel_safe({"path": "a.txt", "content": ""}) for t in tools.values())
