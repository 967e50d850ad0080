"""dsh's read / write / edit on real files: dsh's texts, the read-before-write rule, confinement."""
import os

from hypothesis import given, settings, strategies as st

from dshctl.agents.tools.file_tools import FileTools, Window
from dshctl.agents.tools.fsbase import Roots
from tests.agents.dsh_tools_helpers import FILE_CONFIG, Caller, agent_with
from tests.host.helpers import run_async, write


def files_agent(root, **config):
    return Caller(agent_with(root, FileTools(Roots(None), {**FILE_CONFIG, **config}).definitions()))


@run_async()
async def test_read_envelope_windows_and_footers(tmp_path):
    write(tmp_path / "a.txt", "hello\nworld\n")
    ask = files_agent(tmp_path)
    assert await ask.text("read", {"file_path": "a.txt"}) == (
        f"<path>{tmp_path}/a.txt</path>\n<type>file</type>\n<content>\n1: hello\n2: world\n\n"
        "(End of file - total 2 lines)\n</content>")
    assert "2: world\n\n(End of file - total 2 lines)" in await ask.text("read", {"file_path": "a.txt", "offset": 2})
    assert "1: hello\n\n(Showing lines 1-1 of 2. Use offset=2 to continue.)" in \
        await ask.text("read", {"file_path": "a.txt", "limit": 1})
    out = await ask("read", {"file_path": "a.txt", "offset": 9})
    assert out["isError"] and out["error"]["code"] == "FS_NOT_FOUND"
    assert out["content"][0]["text"] == f'Error: offset 9 is out of range for "{tmp_path}/a.txt" (2 lines)'


@run_async()
async def test_read_caps_long_lines_and_bytes(tmp_path):
    write(tmp_path / "long.txt", "x" * 50 + "\n" + "y\n" * 100)
    ask = files_agent(tmp_path, readMaxLineLength=10, readMaxBytes=60)
    body = await ask.text("read", {"file_path": "long.txt"})
    assert "1: xxxxxxxxxx... (line truncated to 10 chars)" in body
    assert "(Output capped. Showing lines 1-" in body


@run_async()
async def test_read_refusals_carry_dsh_codes(tmp_path):
    (tmp_path / "bin.dat").write_bytes(b"bin\0ary")
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    (tmp_path / "sub").mkdir()
    write(tmp_path.parent / f"{tmp_path.name}-secret.txt", "secret\n")
    os.symlink(tmp_path.parent / f"{tmp_path.name}-secret.txt", tmp_path / "link.txt")
    ask = files_agent(tmp_path)
    expect = {"nope.txt": ("FS_NOT_FOUND", "not found"), "bin.dat": ("FS_NOT_TEXT", "binary file"),
              "latin.txt": ("FS_NOT_TEXT", "invalid UTF-8 text"), "sub": ("FS_NOT_REGULAR_FILE", "not a regular file"),
              "link.txt": ("FS_OUTSIDE_WORKSPACE", "outside the workspace"),
              f"../{tmp_path.name}-secret.txt": ("FS_OUTSIDE_WORKSPACE", "outside the workspace"),
              str(tmp_path.parent / f"{tmp_path.name}-secret.txt"): ("FS_OUTSIDE_WORKSPACE", "outside")}
    for path, (code, words) in expect.items():
        out = await ask("read", {"file_path": path})
        assert out["isError"] and out["error"]["code"] == code, (path, out)
        assert words in out["content"][0]["text"] and "secret\n" not in out["content"][0]["text"]
    for bad in ({}, {"file_path": 5}, {"file_path": "a", "offset": 0}, {"file_path": "a", "limit": 1.5},
                {"file_path": "a", "limit": 5000}, {"file_path": "  "}):
        assert (await ask("read", bad))["isError"], bad


@run_async()
async def test_write_then_edit_follow_the_read_before_write_rule(tmp_path):
    write(tmp_path / "code.py", "x = 1\ny = 2\nx = 1\n")
    ask = files_agent(tmp_path)
    target = f"{tmp_path}/code.py"
    out = await ask("edit", {"file_path": "code.py", "old_string": "y = 2", "new_string": "y = 3"})
    assert out["error"]["code"] == "FS_NOT_OBSERVED"
    assert out["content"][0]["text"] == f'Error: edit requires reading "{target}" first — read the file, then retry'
    out = await ask("write", {"file_path": "code.py", "content": "gone"})
    assert out["error"]["code"] == "FS_NOT_OBSERVED" and (tmp_path / "code.py").read_text().startswith("x = 1")
    await ask("read", {"file_path": "code.py"})
    out = await ask("edit", {"file_path": "code.py", "old_string": "x = 1", "new_string": "x = 3"})
    assert out["error"]["code"] == "FS_AMBIGUOUS_EDIT" and "matched 2 times" in out["content"][0]["text"]
    out = await ask("edit", {"file_path": "code.py", "old_string": "zzz", "new_string": "x"})
    assert out["content"][0]["text"] == f'Error: old_string was not found in "{target}"'
    assert await ask.text("edit", {"file_path": "code.py", "old_string": "x = 1", "new_string": "x = 3",
                                   "replace_all": True}) == \
        f"The file {target} has been updated. All occurrences were successfully replaced."
    assert await ask.text("edit", {"file_path": "code.py", "old_string": "y = 2", "new_string": "y = 5"}) == \
        f"The file {target} has been updated successfully."
    assert (tmp_path / "code.py").read_text() == "x = 3\ny = 5\nx = 3\n"
    os.utime(tmp_path / "code.py", ns=(1, 1))      # someone else changed it since
    out = await ask("edit", {"file_path": "code.py", "old_string": "y = 5", "new_string": "y = 6"})
    assert out["error"]["code"] == "FS_STALE_VERSION" and "re-read the file, then retry" in out["content"][0]["text"]
    assert await ask.text("write", {"file_path": "new/dir/n.txt", "content": "new\n"}) == \
        f"<path>{tmp_path}/new/dir/n.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    assert "Updated file" in await ask.text("write", {"file_path": "new/dir/n.txt", "content": "newer\n"})
    out = await ask("write", {"file_path": "../escape.txt", "content": "x"})
    assert out["error"]["code"] == "FS_OUTSIDE_WORKSPACE" and not (tmp_path.parent / "escape.txt").exists()


@run_async()
async def test_edit_keeps_crlf_and_mode(tmp_path):
    (tmp_path / "w.txt").write_bytes(b"a\r\nb\r\n")
    os.chmod(tmp_path / "w.txt", 0o751)
    ask = files_agent(tmp_path)
    await ask("read", {"file_path": "w.txt"})
    await ask("edit", {"file_path": "w.txt", "old_string": "a\nb", "new_string": "c\nd"})
    assert (tmp_path / "w.txt").read_bytes() == b"c\r\nd\r\n"
    assert (tmp_path / "w.txt").stat().st_mode & 0o777 == 0o751


@run_async()
async def test_sessions_do_not_share_reads(tmp_path):
    write(tmp_path / "f.txt", "1\n")
    tools = FileTools(Roots(None), FILE_CONFIG).definitions()
    first, second = Caller(agent_with(tmp_path, tools, session_id="a")), Caller(agent_with(tmp_path, tools,
                                                                                        session_id="b"))
    await first("read", {"file_path": "f.txt"})
    assert (await second("edit", {"file_path": "f.txt", "old_string": "1", "new_string": "2"}))["error"]["code"] \
        == "FS_NOT_OBSERVED"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab\r", max_size=8), max_size=12), st.integers(1, 14), st.integers(1, 14))
def test_window_numbers_lines_as_a_plain_split(lines, offset, limit):
    text = "\n".join(lines)
    window = Window(offset, limit, 2000, 10 ** 6)
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts = parts[:-1]
    for part in parts:
        window.add(part)
    expected = [(n, p[:-1] if p.endswith("\r") else p) for n, p in enumerate(parts, 1)][offset - 1:offset - 1 + limit]
    assert window.lines == expected and window.total == len(parts)


@run_async()
async def test_str_replace_editor_refuses_bad_input_with_an_error_result(tmp_path):
    from dshctl.agents.tools.editor import Editor
    from dshctl.agents.tools.schemas import STR_REPLACE_EDITOR_PARAMETERS
    from dshctl.agents.tools.definition import Tool
    write(tmp_path / "ok.txt", "one\ntwo\n")
    write(tmp_path / "unseen.txt", "one\n")
    (tmp_path / "bin.dat").write_bytes(b"a\0b")
    write(tmp_path.parent / f"{tmp_path.name}-x.txt", "secret\n")
    os.symlink(tmp_path.parent / f"{tmp_path.name}-x.txt", tmp_path / "out.txt")
    tool = Tool("str_replace_editor", "", Editor(Roots(None), {"maxOutputChars": 40}).execute,
                STR_REPLACE_EDITOR_PARAMETERS)
    ask = Caller(agent_with(tmp_path, [tool]))
    view = await ask.text("str_replace_editor", {"command": "view", "path": f"{tmp_path}/ok.txt"})
    assert view.startswith("Here's the content of /") and view.endswith("</NOTE>") and len(view) < 400
    cases = [({"command": "view", "path": f"{tmp_path}/out.txt"}, "FS_OUTSIDE_WORKSPACE"),
             ({"command": "view", "path": str(tmp_path.parent)}, "FS_OUTSIDE_WORKSPACE"),
             ({"command": "create", "path": f"{tmp_path}/../evil.txt", "file_text": "x"}, "FS_OUTSIDE_WORKSPACE"),
             ({"command": "view", "path": f"{tmp_path}/bin.dat"}, "FS_NOT_TEXT"),
             ({"command": "view", "path": "ok.txt"}, "TOOL_ARGUMENTS_INVALID"),
             ({"command": "view", "path": f"{tmp_path}/ok.txt", "view_range": [1]}, "TOOL_ARGUMENTS_INVALID"),
             ({"command": "create", "path": f"{tmp_path}/n.txt"}, "TOOL_ARGUMENTS_INVALID"),
             ({"command": "str_replace", "path": f"{tmp_path}/unseen.txt", "old_str": "one"}, "FS_NOT_OBSERVED"),
             ({"command": "delete", "path": f"{tmp_path}/ok.txt"}, "TOOL_ARGUMENTS_SCHEMA"),
             ({"path": f"{tmp_path}/ok.txt"}, "TOOL_ARGUMENTS_SCHEMA")]
    for args, code in cases:
        out = await ask("str_replace_editor", args)
        assert out.get("isError") and out["error"]["code"] == code, (args, out)
    assert not (tmp_path.parent / "evil.txt").exists()


@run_async()
async def test_todo_write_and_extra_arguments(tmp_path):
    from dshctl.agents.tools.definition import Tool
    from dshctl.agents.tools.schemas import TODO_WRITE_PARAMETERS
    from dshctl.agents.tools.todo import TodoLists
    lists = TodoLists()
    write(tmp_path / "a.txt", "a\n")
    tools = [Tool("todo_write", "", lists.todo_write, TODO_WRITE_PARAMETERS),
             *FileTools(Roots(None), FILE_CONFIG).definitions()]
    ask = Caller(agent_with(tmp_path, tools))
    assert await ask.text("todo_write", {"todos": [{"content": "a", "status": "completed"},
                                                   {"content": "b", "status": "pending"}]}) == \
        "Updated todo list: 1 pending, 0 in progress, 1 completed."
    assert lists.lists["s-1"][1] == {"content": "b", "status": "pending"}
    for bad in ({}, {"todos": "x"}, {"todos": [{"content": "a", "status": "done"}]},
                {"todos": [{"content": "a", "status": "pending", "extra": 1}]}, {"todos": [{"status": "pending"}]}):
        out = await ask("todo_write", bad)
        assert out.get("isError") and out["error"]["code"] == "TOOL_ARGUMENTS_SCHEMA", bad
    # an argument the schema does not name is ignored, as dsh's tools ignore it
    assert "1: a" in await ask.text("read", {"file_path": "a.txt", "bogus": 1})
    out = await ask("read", "{not json")
    assert out.get("isError") and out["error"]["code"] == "TOOL_ARGUMENTS_JSON"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab\n", max_size=30), st.text(alphabet="ab\n", min_size=1, max_size=4),
       st.text(alphabet="abc", max_size=4), st.booleans())
def test_literal_edit_replaces_exactly_or_refuses(content, old, new, replace_all):
    from dshctl.agents.tools.file_tools import literal_edit
    from dshctl.agents.tools.fsbase import FsError
    count = content.count(old)
    try:
        edited = literal_edit(content, old, new, replace_all, "/f")
    except FsError as exc:
        assert (count == 0 and exc.code == "FS_EDIT_NOT_FOUND") or \
            (count > 1 and not replace_all and exc.code == "FS_AMBIGUOUS_EDIT" and f"matched {count} times" in exc.message)
        return
    assert count == 1 or (count > 1 and replace_all)
    assert edited == content.replace(old, new)
