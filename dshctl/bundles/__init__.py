"""Services: git sources, the content-addressed store, install/lock, npm ranges (docs/bundles.md)."""
