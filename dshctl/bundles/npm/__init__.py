"""npm dependencies of installed bundles: registry config, packuments and tarballs over HTTP,
integrity, safe extraction, resolution (npm's placement rules) and the on-disk layout.

See docs/bundles.md, "npm dependencies". Nothing a package ships is ever executed.
"""
