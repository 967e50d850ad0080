"""``dshctl schema export DIR``: the schemas as a self-contained directory, plus editor settings.

The schemas' ``$ref``s are relative file names and they carry no ``$id``, so a copied directory works
offline. DIR itself holds the strict schemas, byte for byte the shipped ones: what validators such as
check-jsonschema must use, and what `dshctl lint` checks. yaml-language-server sees ``!!js <expr>`` as a
string (with the tag declared in customTags), so it gets its own copy in ``DIR/yaml-language-server/``
where ``!!js`` may also be a string; a separate, named directory, so that no validator picks it up by
mistake. Next to the strict schemas go two settings files for that server, pointing at the copy:
``vscode-settings.json`` (paste into ``.vscode/settings.json``; paths relative to the workspace when
DIR is inside it) and ``yaml-language-server.json`` (the ``settings`` object other LSP clients send,
with absolute paths). docs/editors.md documents both; a test drives the real server with them.
The editor story itself is `dshctl lsp`, which knows the tag and publishes lint's own findings.
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
                     "**/cordis.patch.*.yaml", "**/*.cordis.patch.yml", "**/*.cordis.patch.yaml",
                     "**/*.overlay.yml", "**/*.overlay.yaml"],
    "preset": ["**/preset.yml", "**/preset.yaml"],
    "settings": ["**/.dsh/settings.yaml"],
}
JSON_GLOBS = {"profile-manifest": ["**/profiles/*/package.json"]}
EDITOR_DIR = "yaml-language-server"  # the variant for that server, inside DIR
EDITOR_STRING = {"type": "string", "x-dshctl-editor-only": True,
                 "description": "How yaml-language-server sees `!!js <expr>` when told about the tag "
                                "(customTags \"tag:yaml.org,2002:js scalar\"): a string. Validators and "
                                "`dshctl lint` use the strict schemas beside this directory."}
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


def for_yaml_language_server(schema: dict) -> dict:
    """``schema`` with its ``!!js`` definition (``$defs.jsExpr``) also taking a string."""
    defs = schema.get("$defs", {})
    if "jsExpr" not in defs:
        return schema
    strict = {k: v for k, v in defs["jsExpr"].items() if k not in ("title", "description")}
    loose = {k: v for k, v in defs["jsExpr"].items() if k in ("title", "description")}
    loose["anyOf"] = [strict, EDITOR_STRING]
    return {**schema, "$defs": {**defs, "jsExpr": loose}}


def export(dest: Path, workspace: Path) -> list[Path]:
    """Write the strict schemas, yaml-language-server's copy and both settings files into ``dest``;
    the files written."""
    editor = dest / EDITOR_DIR
    editor.mkdir(parents=True, exist_ok=True)
    written = []
    for file in [*SCHEMAS.values(), *EXTRA_SCHEMAS]:
        atomic_write(dest / file, (schemas_dir() / file).read_bytes())
        written.append(dest / file)
    for file in SCHEMAS.values():
        loose = for_yaml_language_server(json.loads((schemas_dir() / file).read_text(encoding="utf-8")))
        atomic_write(editor / file, json.dumps(loose, indent=2, ensure_ascii=False) + "\n")
        written.append(editor / file)
    try:
        ref = "./" + dest.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        ref = dest.resolve().as_posix()
    ref = ref.rstrip("/").removesuffix("/.")
    for name, data in ((VSCODE_SETTINGS, editor_settings(f"{ref}/{EDITOR_DIR}")),
                       (LSP_SETTINGS, lsp_settings(editor))):
        atomic_write(dest / name, json.dumps(data, indent=2) + "\n")
        written.append(dest / name)
    return written


__all__ = ["CUSTOM_TAGS", "EDITOR_DIR", "editor_settings", "export", "for_yaml_language_server", "lsp_settings"]
