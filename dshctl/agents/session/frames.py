"""The ``.jsonl.zstd`` container: independent, checksummed Zstandard frames, concatenated (RFC 8878).

The first frame holds exactly the header line; every durable append batch is one more frame. A frame
boundary scanner reads frame and block headers without decompressing, so a reader can (a) list a
session by decoding only the first frame and (b) tell a torn final frame (EOF inside it: a crash
during append, recoverable) from corruption inside a complete frame (refused).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import zstandard

ZSTD_MAGIC = 0xFD2FB528


class FrameCorruption(ValueError):
    """A complete frame (or the container's structure) is damaged: not a torn tail."""


@dataclass
class FrameScan:
    frames: list[tuple[int, int]] = field(default_factory=list)   # (start, end) of complete frames
    torn_start: int | None = None                                 # start of an incomplete last frame


def _frame_end(buf: bytes, start: int) -> int | None:
    """Where the frame starting at ``start`` ends, or None when the buffer ends inside it."""
    size = len(buf)
    if size - start < 4:
        return None
    if int.from_bytes(buf[start:start + 4], "little") != ZSTD_MAGIC:
        raise FrameCorruption(f"invalid Zstandard frame magic at byte {start}")
    if size - start == 4:
        return None
    descriptor = buf[start + 4]
    if descriptor & 0x18:
        raise FrameCorruption(f"reserved frame-header bit set at byte {start + 4}")
    single_segment = bool(descriptor & 0x20)
    dict_bytes = (0, 1, 2, 4)[descriptor & 0x03]
    fcs_flag = descriptor >> 6
    fcs_bytes = (1 if single_segment else 0) if fcs_flag == 0 else 1 << fcs_flag
    offset = start + 5 + (0 if single_segment else 1) + dict_bytes + fcs_bytes
    if offset > size:
        return None
    while True:                                   # blocks: 3-byte header, then the payload
        if size - offset < 3:
            return None
        block_header = int.from_bytes(buf[offset:offset + 3], "little")
        block_type = (block_header >> 1) & 0x03
        if block_type == 3:
            raise FrameCorruption(f"reserved Zstandard block type at byte {offset}")
        offset += 3 + (1 if block_type == 1 else block_header >> 3)
        if offset > size:
            return None
        if block_header & 1:
            break
    if descriptor & 0x04:                         # content checksum
        offset += 4
        if offset > size:
            return None
    return offset


def scan_frames(buf: bytes, max_frames: int | None = None, start: int = 0) -> FrameScan:
    """Locate complete frames from ``start`` (a frame boundary); EOF inside the last one is reported
    as ``torn_start``."""
    scan = FrameScan()
    offset = start
    while offset < len(buf):
        end = _frame_end(buf, offset)
        if end is None:
            scan.torn_start = offset
            return scan
        scan.frames.append((offset, end))
        offset = end
        if max_frames is not None and len(scan.frames) >= max_frames:
            return scan
    return scan


# One (de)compressor per thread: zstandard's are not thread-safe, and sessions commit and are read
# off the event loop (asyncio.to_thread), several at a time; a shared one corrupted frames or crashed.
_PER_THREAD = threading.local()


def _compressor() -> zstandard.ZstdCompressor:
    made = getattr(_PER_THREAD, "compressor", None)
    if made is None:
        made = _PER_THREAD.compressor = zstandard.ZstdCompressor(write_checksum=True)
    return made


def _decompressor() -> zstandard.ZstdDecompressor:
    made = getattr(_PER_THREAD, "decompressor", None)
    if made is None:
        made = _PER_THREAD.decompressor = zstandard.ZstdDecompressor()
    return made


def compress_frame(data: bytes) -> bytes:
    """One independently decodable frame with a content checksum (dsh sets ``ZSTD_c_checksumFlag``)."""
    return _compressor().compress(data)


def decompress_frame(frame: bytes) -> bytes:
    """Decode one complete frame; a checksum mismatch or bad block is :class:`FrameCorruption`."""
    try:
        obj = _decompressor().decompressobj()
        out = obj.decompress(frame)
    except zstandard.ZstdError as exc:
        raise FrameCorruption(f"Zstandard frame failed validation: {exc}") from None
    if not obj.eof:
        raise FrameCorruption("Zstandard frame ended before its last block")
    return out


def decompress_prefix(partial: bytes) -> bytes:
    """Whatever plaintext a torn final frame still yields (no checksum: the frame never finished)."""
    try:
        return _decompressor().decompressobj().decompress(partial)
    except zstandard.ZstdError:
        return b""
