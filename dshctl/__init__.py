"""dshctl: toolchain and embedded host for the dsh / Cordis configuration model."""

__version__ = "0.1.0"
