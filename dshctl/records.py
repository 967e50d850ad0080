"""Plain value classes for what runs at start-up, where importing ``dataclasses`` (it imports
``inspect``) would cost ~8 ms of a ~70 ms cached ``dshctl lint`` (docs/performance.md)."""
from __future__ import annotations


class Record:
    """A value class: its fields are its ``__slots__``; equal, hashed and shown by them, as a
    dataclass would be. A subclass writes its own ``__init__``; treat instances as immutable unless
    the subclass says otherwise (and then sets ``__hash__ = None``)."""

    __slots__ = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.__slots__)
        return f"{type(self).__name__}({shown})"
