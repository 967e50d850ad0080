"""``cordis:include``: a file mounted as a subtree (cordis-runtime.md §7, write-back §8).

Reads are transactional: the cached bytes and parsed rows are committed only after the subtree
update succeeded, so a broken file keeps the last good tree. Patches are applied to a copy on every
refresh and include-config update. Initial apply, refresh and config updates share one queue.
"""
from __future__ import annotations

import asyncio
import errno
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dshctl.core.yaml import dialect, emit
from dshctl.core.yaml.verdict import js_error_text

from dshctl.core import fsutil
from dshctl.core.yaml.nodes import JsExpr
from dshctl.core.compose.patching import apply_patches
from dshctl.errors import DshctlError, Loc, ParseError
from dshctl.runtime import logger

from .errors import ConfigFileError, LoaderError, cause_text
from .tree import Tree
from dshctl.core.yaml.jsvalue import json_dumps

if TYPE_CHECKING:  # pragma: no cover
    from dshctl.runtime import Context

    from .entry import Entry

    from .loader import Loader

INCLUDE_NAME = "cordis:include"
SUPPORTED = (".yml", ".yaml", ".json")
RETRYABLE = {errno.EACCES, errno.EBUSY, errno.EPERM}
WRITE_RETRIES = 10


class Include:
    """One included file and its subtree. ``writable=False`` makes it input only (a preset)."""

    def __init__(self, loader: "Loader", ctx: "Context", file: Path, *, prefix: str,
                 patches: Any = None, initial: Any = None, module_base: Path | None = None,
                 writable: bool = True):
        if file.suffix not in SUPPORTED:
            raise LoaderError(f'extension "{file.suffix}" not supported', loc=Loc(str(file)),
                              hint="an included file is .yml, .yaml or .json")
        self.loader = loader
        self.file = file
        self.patches = patches
        self.initial = initial
        self.writable = writable
        self.tree = Tree(loader, ctx, file.parent, prefix=prefix, module_base=module_base, source=self)
        self.text: bytes | None = None     # the last content read or written
        self.data: list | None = None      # the last good parsed rows (never patched in place)
        self.queue = asyncio.Lock()
        self.entry: "Entry | None" = None   # the include row, when mounted by one (not a preset)
        self._write_task: asyncio.Task | None = None   # the write that has not started yet
        self._writing: set[asyncio.Task] = set()
        self.write_error: BaseException | None = None

    # ---- reading ---------------------------------------------------------------------------------
    async def refresh(self) -> bool:
        """Re-read the file; byte-identical content is a no-op. False when nothing changed."""
        async with self.queue:
            raw = self._read()
            if raw == self.text and self.data is not None:
                return False
            data = self._parse(raw)
            await self.tree.update(self._patched(data), boot=self.loader.booting)
            self.text, self.data = raw, data
            return True

    async def set_patches(self, patches: Any) -> None:
        """An include-config update with the same path: re-apply the new overlay, no restart."""
        async with self.queue:
            await self.tree.update(self._patched(self.data or [], patches))
            self.patches = patches

    def _read(self) -> bytes:
        try:
            return self.file.read_bytes()
        except FileNotFoundError:
            if self.initial is None:
                raise ConfigFileError(f"config file not found: {self.file}", loc=Loc(str(self.file)),
                                      hint="create the file, or give the include an `initial` value"
                                      ) from None
            self._write_rows(self.initial)
            return self.file.read_bytes()
        except OSError as err:
            raise ConfigFileError(f"failed to read config file {self.file}: {err.strerror}",
                                  loc=Loc(str(self.file))) from None

    def _parse(self, raw: bytes) -> list:
        path = str(self.file)
        try:
            text = raw.decode("utf-8")
            doc = dialect.load_json(text, path) if self.file.suffix == ".json" else \
                dialect.load_yaml(text, path)
        except ParseError as err:
            raise ConfigFileError(f"failed to parse config file {path}: {js_error_text(err)}",
                                  loc=err.loc or Loc(path), hint=err.hint) from None
        except (DshctlError, UnicodeDecodeError) as err:
            raise ConfigFileError(f"failed to parse config file {path}: {cause_text(err)}",
                                  loc=getattr(err, "loc", None) or Loc(path)) from None
        if not isinstance(doc.value, list):
            raise ConfigFileError(f"failed to validate config file {path}: config file must be a "
                                  "top-level array", loc=Loc(path, 1, 1),
                                  hint="the file holds a YAML list of rows (`- id: …`)")
        return doc.value

    def _patched(self, data: list, patches: Any = ...) -> list:
        patches = self.patches if patches is ... else patches
        if not patches:
            return apply_patches(data, [], track=False).rows  # a copy: rows are never shared
        return apply_patches(data, list(patches), track=False).rows

    # ---- writing (§8) ------------------------------------------------------------------------------
    def schedule_write(self) -> None:
        """Coalesce writes to the next loop turn; the last state wins. Failures are logged."""
        if not self.writable or self._write_task is not None:
            return
        task = asyncio.get_running_loop().create_task(self._deferred_write())
        self._write_task = task
        self._writing.add(task)
        task.add_done_callback(self._writing.discard)

    async def _deferred_write(self) -> None:
        await asyncio.sleep(0)
        self._write_task = None  # a request from now on schedules one more write
        try:
            await self.write()
        except Exception as err:  # noqa: BLE001 - logged; `flush()` re-raises for teardown
            self.write_error = err
            logger.error("failed to write config file %s", self.file, exc_info=err)

    async def flush(self) -> None:
        """Wait for pending and running writes; re-raise the last failure (teardown uses this)."""
        while self._writing:
            await asyncio.gather(*self._writing, return_exceptions=True)
        if self.write_error is not None:
            err, self.write_error = self.write_error, None
            raise err

    async def write(self) -> None:
        """Write the running rows through a temp file and rename; a rename refused with EACCES,
        EBUSY or EPERM (a virus scanner, an editor holding the file) is retried with back-off."""
        if not self.writable:
            return
        async with self.queue:
            data = self._encode(self.tree.rows)
            for attempt in range(WRITE_RETRIES + 1):
                try:
                    fsutil.atomic_write(self.file, data)
                    break
                except OSError as err:
                    if err.errno in RETRYABLE and attempt < WRITE_RETRIES:
                        await asyncio.sleep((attempt + 1) * 0.05)
                        continue
                    raise LoaderError(f"failed to write config file {self.file}: {err.strerror or err}",
                                      loc=Loc(str(self.file)),
                                      hint="the file keeps its previous content") from err
            self.text = data  # the next refresh of our own write is a no-op

    def _write_rows(self, rows: Any) -> None:
        data = self._encode(rows)
        fsutil.atomic_write(self.file, data)
        self.text = data

    def _encode(self, rows: Any) -> bytes:
        if self.file.exists() and _readonly(self.file):
            raise LoaderError("cannot overwrite readonly config", loc=Loc(str(self.file)),
                              hint="make the file writable, or stop the plugin from saving its config")
        rows = [sort_row(r) for r in rows] if isinstance(rows, list) else rows
        if self.file.suffix == ".json":
            return (json_dumps(_jsonable(rows), indent=2) + "\n").encode()
        return emit.dump_rows(rows).encode()

    async def close(self) -> None:
        """The include fiber unloads: its subtree went with it (its fibers were its effects)."""
        if self._writing:
            await asyncio.gather(*self._writing, return_exceptions=True)
        self.tree.detach()
        entry = self.entry
        if entry is not None and entry.subtree is self.tree:
            entry.subtree = None


def _readonly(file: Path) -> bool:
    # no write bit at all counts too: root may write anyway, but the user marked the file readonly
    return not os.access(file, os.W_OK) or not file.stat().st_mode & 0o222


def sort_row(row: Any) -> Any:
    """Key order ``id``, ``name``, the rest alphabetically, ``config`` last; null keys dropped."""
    if not isinstance(row, dict):
        return row
    keys = [k for k in ("id", "name") if k in row]
    keys += sorted(k for k in row if k not in ("id", "name", "config"))
    keys += ["config"] if "config" in row else []
    out = {k: row[k] for k in keys if row[k] is not None}
    if isinstance(out.get("config"), list) and out.get("group"):
        out["config"] = [sort_row(r) for r in out["config"]]
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, JsExpr):
        return value.to_json()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


class IncludePlugin:
    """The built-in plugin behind ``name: cordis:include`` (one instance per loader)."""

    name = INCLUDE_NAME

    def __init__(self, loader: "Loader"):
        self.loader = loader

    async def apply(self, ctx: "Context", config: Any):
        entry = self.loader.fibers[ctx.fiber]
        cfg = config if isinstance(config, dict) else {}
        path = cfg.get("path")
        if not isinstance(path, str) or not path:
            raise LoaderError(f"include {entry.full_id} needs a `path` string", loc=entry.loc)
        include = Include(self.loader, ctx, (entry.declared_dir / path).resolve(),
                          prefix=entry.full_id + ":", patches=cfg.get("patches"),
                          initial=cfg.get("initial"), module_base=entry.tree.module_base)
        entry.subtree = include.tree
        include.entry = entry

        async def on_update(fiber, new_config, no_save, next_):
            new = new_config if isinstance(new_config, dict) else {}
            if new.get("path") != path:
                return await next_()  # another file: a full restart
            await include.set_patches(new.get("patches"))
            return None
        ctx.on("internal/update", on_update)
        await include.refresh()
        return include.close
