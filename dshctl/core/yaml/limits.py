"""The dialect's limits, importable without the parser (start-up time of cached commands)."""

MAX_DEPTH = 100  # js-yaml's maxDepth: dsh refuses deeper files
MAX_EXPANDED_NODES = 1_000_000
MAX_FILE_BYTES = 16 * 1024 * 1024
