"""Composition of profiles exactly as dsh does it (docs/compose.md).

``profile`` (manifests, bundle resolution), ``layers`` (dsh's layer order and file-shape rules),
``patching`` (dsh's single-pass patch algorithm) with ``aliasing`` (structuredClone semantics), ``composition``, then what is built on it: ``dump``, ``explain``, ``diff``, ``homerev``,
``edit`` (safe edits of a user layer), ``profile_status``. May import ``core.yaml``, ``core.jsexpr``
and the loose ``core`` modules; never ``core.presets`` or anything above core.
"""
