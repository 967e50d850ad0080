"""``cordis:group``: the group row's own fiber. Its rows are entries of the same tree, reconciled
by the tree itself, so the fiber only marks the group as mounted (it stays up when the group's own
``disabled`` is set; its descendants are the ones unmounted)."""
from __future__ import annotations

GROUP_NAME = "cordis:group"


class GroupPlugin:
    name = GROUP_NAME

    @staticmethod
    def apply(ctx, config) -> None:
        return None


GROUP_PLUGIN = GroupPlugin()
