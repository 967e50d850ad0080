"""npm dependencies of installed bundles: registry config, packuments and tarballs over HTTP,
integrity, safe extraction, resolution (npm's placement rules) and the on-disk layout.

See docs/bundles.md, "npm dependencies". Nothing a package ships is ever executed.
May import ``dshctl.bundles`` (transaction, store lock, limits, semver, package rules),
``dshctl.core`` and ``dshctl.errors``; imported only by ``dshctl.bundles.install`` and ``lock``.
"""
