"""dsh's ``read_image`` tool (``@dshctl/tool-fs`` registers it beside read/write/edit).

dsh's order of refusals and their texts: an empty path; a path not ending in .png/.jpg/.jpeg/.webp/.gif;
a model that does not take image input (the llm row's ``inputModalities``; DeepSeek's text models do not,
so there the model reads the refusal telling it to switch); then the file's own checks (not found, not a
regular file, outside the workspace). The bytes must be the image the extension names, and no side may
pass ``maxImageDimension``. dshctl does not downscale: a larger image is refused with dsh's advice to
read a smaller copy.

The result is dsh's ``<path>…</path>`` / ``<type>image</type>`` text block followed by an ``image`` block
(``mediaType``, ``width``, ``height``, ``bytes``, base64 ``data``).
"""
from __future__ import annotations

import asyncio
import base64
import os
import struct
from pathlib import Path

from . import safe_fs
from .definition import Tool, error_result, text_result
from .fsbase import FsError, Roots, fs_error_result, regular_file
from .schemas import READ_IMAGE_PARAMETERS
from .workspace import OutsideWorkspace

MEDIA_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
               ".gif": "image/gif"}
MAX_IMAGE_BYTES = 20 * 1024 * 1024
MAX_IMAGE_DIMENSION = 8000


def sniff(data: bytes) -> tuple[str, int, int] | None:
    """(media type, width, height) from an image's header, or None when the bytes are no image we read."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
        return ("image/png", *struct.unpack(">II", data[16:24]))
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return ("image/gif", *struct.unpack("<HH", data[6:10]))
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp(data)
    if data.startswith(b"\xff\xd8"):
        return _jpeg(data)
    return None


def _webp(data: bytes):
    kind = data[12:16]
    if kind == b"VP8X" and len(data) >= 30:
        return ("image/webp", 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little"))
    if kind == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return ("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if kind == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return ("image/webp", width & 0x3FFF, height & 0x3FFF)
    return None


def _jpeg(data: bytes):
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        length = struct.unpack(">H", data[at + 2:at + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return ("image/jpeg", width, height)
        at += 2 + length
    return None


def image_text(display: str, media_type: str, width: int, height: int, size: int) -> str:
    return (f"<path>{display}</path>\n<type>image</type>\n<content>\n"
            f"{media_type} image, {width}x{height} px, {size} bytes\n</content>")


class ReadImage:
    def __init__(self, roots: Roots, ctx=None):
        self.roots, self.ctx = roots, ctx

    def definition(self) -> Tool:
        return Tool("read_image", "Read a PNG, JPEG, WebP or GIF file of the workspace and return the image "
                    "itself (only for a model that takes image input).", self.read_image, READ_IMAGE_PARAMETERS,
                    is_concurrency_safe=lambda _args: True, dsh_arguments=True)

    async def read_image(self, args, run):
        return await asyncio.to_thread(self._guarded, args, run)

    def _guarded(self, args, run):
        try:
            return self._read(args, run)
        except FsError as exc:
            return fs_error_result(exc)
        except OutsideWorkspace as exc:
            return error_result(str(exc), "FS_OUTSIDE_WORKSPACE")
        except PermissionError:
            return fs_error_result(FsError(f"permission denied: {args.get('file_path')}", "FS_PERMISSION_DENIED"))
        except OSError as exc:
            return fs_error_result(FsError(f"{args.get('file_path')}: {exc.strerror or exc}", "FS_IO_ERROR"))

    def _refusal(self, path: str, run) -> str | None:
        llm = self.ctx.get("llm") if self.ctx is not None else None
        options = getattr(getattr(run, "agent", None), "options", None) or {}
        model = options.get("model") or getattr(llm, "model", None)
        modalities = getattr(llm, "input_modalities", None)
        if model is None or modalities is None:
            return f'cannot read "{path}" as an image: the current model route could not be resolved'
        if "image" not in modalities(model):
            return (f'cannot read "{path}" as an image: model "{model}" does not declare image input; switch to '
                    "an image-capable model to read images")
        return None

    def _read(self, args, run):
        path = args["file_path"]
        if not path.strip():
            return error_result("file_path must be a non-empty string", "TOOL_FAILED")
        media_type = MEDIA_TYPES.get(os.path.splitext(path)[1].lower())
        if media_type is None:
            return error_result(f'cannot read "{path}": read_image only accepts PNG/JPEG/WebP/GIF paths',
                                "TOOL_FAILED")
        refusal = self._refusal(path, run)
        if refusal is not None:
            return error_result(refusal, "TOOL_FAILED")
        target = self.roots.target(run, path, "read")
        regular_file(target, "read")
        data, _size = safe_fs.read_bytes(Path(self.roots.root(run)).resolve(), target.real, MAX_IMAGE_BYTES + 1)
        if len(data) > MAX_IMAGE_BYTES:
            return error_result(f'cannot read "{target.display}": the image cannot be stored within the '
                                "deployment's byte limits; downscale the image and read the smaller copy", "TOOL_FAILED")
        found = sniff(data)
        if found is None or found[0] != media_type:
            ext = os.path.splitext(target.display)[1].lower()
            return error_result(
                f'cannot read "{target.display}": the {ext} extension declares {media_type}, but the bytes use a '
                "different image format; rename the file to match its actual format if it is PNG/JPEG/WebP/GIF, "
                "or convert it to one of those formats", "TOOL_FAILED")
        _type, width, height = found
        if max(width, height) > MAX_IMAGE_DIMENSION:
            return error_result(f'cannot read "{target.display}": at least one image side exceeds the '
                                f"{MAX_IMAGE_DIMENSION}px limit; downscale the image and read the smaller copy",
                                "TOOL_FAILED")
        result = text_result(image_text(target.display, media_type, width, height, len(data)))
        result["content"].append({"type": "image", "mediaType": media_type, "width": width, "height": height,
                                  "bytes": len(data), "data": base64.b64encode(data).decode("ascii")})
        return result
