"""dsh's glob and grep on a real tree: gitignore rules (in a git work tree), hidden files, caps, confinement."""
import os
import subprocess

from dshctl.agents.tools.search import SearchTools, expand_braces
from dshctl.agents.tools.fsbase import Roots
from tests.agents.dsh_tools_helpers import SEARCH_CONFIG, Caller, agent_with
from tests.host.helpers import run_async, write


def tree(root):
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write(root / ".gitignore", "ignored.txt\nbuild/\n")
    write(root / "ignored.txt", "secret x\n")
    write(root / "build" / "out.py", "x = 0\n")
    write(root / "sub" / "code.py", "x = 3\ny = 2\nx = 3\n")
    write(root / ".hidden.py", "x = 9\n")
    write(root / "a.txt", "over\n")
    for n, name in enumerate(["ignored.txt", "build/out.py", "sub/code.py", ".hidden.py", "a.txt"]):
        os.utime(root / name, ns=(10 ** 9 * (n + 1), 10 ** 9 * (n + 1)))


def search_agent(root, **config):
    return Caller(agent_with(root, SearchTools(Roots(None), {**SEARCH_CONFIG, **config}).definitions()))


@run_async()
async def test_glob_lists_files_oldest_first_ignored_and_hidden_included(tmp_path):
    tree(tmp_path)
    ask = search_agent(tmp_path)
    assert await ask.text("glob", {"pattern": "*.txt"}) == "ignored.txt\na.txt"
    assert await ask.text("glob", {"pattern": "**/*.py"}) == "build/out.py\nsub/code.py\n.hidden.py"
    assert await ask.text("glob", {"pattern": "*.{py,txt}", "path": "sub"}) == "sub/code.py"
    assert await ask.text("glob", {"pattern": "*.zzz"}) == "No files found"
    assert ".git/" not in await ask.text("glob", {"pattern": "*"})
    capped = await search_agent(tmp_path, globMaxResults=2).text("glob", {"pattern": "*"})
    assert capped.startswith("ignored.txt\nbuild/out.py\n\n(Showing 2 of ")


@run_async()
async def test_grep_groups_matches_and_respects_gitignore(tmp_path):
    tree(tmp_path)
    ask = search_agent(tmp_path)
    assert await ask.text("grep", {"pattern": "x"}) == "Found 2 matches\n\nsub/code.py\nLine 1: x = 3\nLine 3: x = 3"
    assert await ask.text("grep", {"pattern": "secret"}) == "No matches found"
    assert await ask.text("grep", {"pattern": "y", "include": "*.py"}) == "Found 1 match\n\nsub/code.py\nLine 2: y = 2"
    assert await ask.text("grep", {"pattern": "x", "path": "sub/code.py"}) == \
        "Found 2 matches\n\nsub/code.py\nLine 1: x = 3\nLine 3: x = 3"
    capped = await search_agent(tmp_path, grepMaxMatches=1).text("grep", {"pattern": "x"})
    assert capped.startswith("Found 1 of 2 matches\n\nsub/code.py\nLine 1: x = 3\n\n(")


@run_async()
async def test_gitignore_only_inside_a_git_work_tree(tmp_path):
    write(tmp_path / ".gitignore", "a.txt\n")
    write(tmp_path / "a.txt", "hit\n")
    assert "a.txt" in await search_agent(tmp_path).text("grep", {"pattern": "hit"})


@run_async()
async def test_bad_input_ends_in_an_error_result(tmp_path):
    tree(tmp_path)
    write(tmp_path.parent / f"{tmp_path.name}-out" / "o.txt", "x\n")
    os.symlink(tmp_path.parent / f"{tmp_path.name}-out", tmp_path / "outlink")
    os.symlink(tmp_path.parent / f"{tmp_path.name}-out" / "o.txt", tmp_path / "olink.txt")
    write(tmp_path / "bin.dat", "x")
    (tmp_path / "bin.dat").write_bytes(b"x\0x")
    ask = search_agent(tmp_path)
    assert "o.txt" not in await ask.text("glob", {"pattern": "*"})
    assert "olink" not in await ask.text("grep", {"pattern": "x"}) and "bin.dat" not in \
        await ask.text("grep", {"pattern": "x"})
    cases = [("grep", {"pattern": "[unclosed"}, "SEARCH_INVALID_PATTERN"),
             ("grep", {"pattern": "x", "path": ".."}, "FS_OUTSIDE_WORKSPACE"),
             ("glob", {"pattern": "*", "path": "outlink"}, "FS_OUTSIDE_WORKSPACE"),
             ("glob", {"pattern": "*", "path": "nowhere"}, "FS_NOT_FOUND"),
             ("grep", {"pattern": "x", "include": "*.py,*.txt"}, "TOOL_ARGUMENTS_INVALID"),
             ("grep", {"pattern": "x", "include": "!*.py"}, "TOOL_ARGUMENTS_INVALID"),
             ("grep", {"pattern": ""}, "TOOL_ARGUMENTS_INVALID"),
             ("grep", {}, "TOOL_ARGUMENTS_SCHEMA"), ("glob", {"pattern": 3}, "TOOL_ARGUMENTS_SCHEMA")]
    for name, args, code in cases:
        out = await ask(name, args)
        assert out["isError"] and out["error"]["code"] == code, (name, args, out)


def test_braces_expand_like_ripgrep_alternation():
    assert expand_braces("*.{js,ts}") == ["*.js", "*.ts"]
    assert expand_braces("{a,b}/{c,d}") == ["a/c", "a/d", "b/c", "b/d"]
    assert expand_braces("plain") == ["plain"]


@run_async()
async def test_huge_lines_and_many_matches_stay_bounded(tmp_path):
    from dshctl.agents.tools import search
    write(tmp_path / "big.txt", "needle " + "x" * (3 << 20) + "\nsecond needle\n" + "needle\n" * 5000)
    ask = search_agent(tmp_path)
    out = await ask.text("grep", {"pattern": "needle"})
    assert out.startswith("Found 250 of 5002 matches\n\nbig.txt\nLine 1: needle xxx")
    assert "Line 2: second needle" in out and "(line truncated)" in out and len(out) < 20000
    assert search.SCAN_LINE_BYTES < (3 << 20)
