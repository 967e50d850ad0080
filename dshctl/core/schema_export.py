"""``dshctl schema export DIR``: the schemas as a self-contained directory, plus editor settings.

The schemas' ``$ref``s are relative file names and they carry no ``$id``, so a copied directory works
offline in any editor. Next to them go two settings files for yaml-language-server:
``vscode-settings.json`` (paste into ``.vscode/settings.json``; paths relative to the workspace when
DIR is inside it) and ``yaml-language-server.json`` (the ``settings`` object other LSP clients send,
with absolute paths). docs/editors.md documents both; a test drives the real server with them.
"""
from __future__ import annotations

import json
from pathlib import Path

from dshctl.core.data import schemas_dir
from dshctl.core.fsutil import atomic_write
from dshctl.core.schemas import SCHEMAS

# yaml-language-server needs the tag's full name: "!!js" is the shorthand of tag:yaml.org,2002:js.
CUSTOM_TAGS = ["tag:yaml.org,2002:js scalar"]
EXTRA_SCHEMAS = ("lint-report.schema.json",)
YAML_GLOBS = {
    "entry-list": ["**/cordis.yml", "**/cordis.yaml", "**/*.cordis.yml", "**/*.cordis.yaml"],
    "cordis.patch": ["**/cordis.patch.yml", "**/cordis.patch.yaml", "**/cordis.patch.*.yml",
                     "**/cordis.patch.*.yaml", "**/*.overlay.yml", "**/*.overlay.yaml"],
    "preset": ["**/preset.yml", "**/preset.yaml"],
    "settings": ["**/.dsh/settings.yaml"],
}
JSON_GLOBS = {"profile-manifest": ["**/profiles/*/package.json"]}
VSCODE_SETTINGS = "vscode-settings.json"
LSP_SETTINGS = "yaml-language-server.json"


def with_hidden_dirs(globs: list[str]) -> list[str]:
    """``**`` skips dot directories in the server's glob matcher; presets live in ``.agent-presets/``
    and homes in ``.dsh/``, so every ``**/X`` also comes as ``**/.*/**/X``."""
    return globs + [f"**/.*/{g}" for g in globs if g.startswith("**/") and not g.startswith("**/.")]


def editor_settings(ref: str) -> dict:
    """yaml-language-server settings with every schema at ``ref/<file>`` (``ref``: a directory)."""
    def at(name: str) -> str:
        return f"{ref}/{SCHEMAS[name]}"
    return {
        "yaml.schemas": {at(n): with_hidden_dirs(globs) for n, globs in YAML_GLOBS.items()},
        "yaml.customTags": CUSTOM_TAGS,
        "json.schemas": [{"fileMatch": globs, "url": at(n)} for n, globs in JSON_GLOBS.items()],
    }


def lsp_settings(directory: Path) -> dict:
    """The same, nested as an LSP client sends it (``workspace/didChangeConfiguration``)."""
    flat = editor_settings(directory.resolve().as_posix())
    return {"yaml": {"schemas": flat["yaml.schemas"], "customTags": flat["yaml.customTags"],
                     "validate": True}}


def export(dest: Path, workspace: Path) -> list[Path]:
    """Write the schemas and both settings files into ``dest``; the files written."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for file in [*SCHEMAS.values(), *EXTRA_SCHEMAS]:
        atomic_write(dest / file, (schemas_dir() / file).read_bytes())
        written.append(dest / file)
    try:
        ref = "./" + dest.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        ref = dest.resolve().as_posix()
    for name, data in ((VSCODE_SETTINGS, editor_settings(ref.rstrip("/").removesuffix("/."))),
                       (LSP_SETTINGS, lsp_settings(dest))):
        atomic_write(dest / name, json.dumps(data, indent=2) + "\n")
        written.append(dest / name)
    return written


__all__ = ["CUSTOM_TAGS", "editor_settings", "export", "lsp_settings"]
