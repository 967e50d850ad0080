"""A fleet on etcd: one published profile revision, many hosts applying it (docs/fleet.md).

A service above ``host/`` (whose transactional reload it drives) and below ``cli/``: it may import
``core/``, ``lint/``, ``host/`` and the layers under them, never ``cli/``. The etcd client (etcd.py,
httpx on etcd's JSON gateway) is imported only by the fleet commands."""
