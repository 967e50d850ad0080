"""The command line: a thin layer that parses arguments and renders results.

One module per command group, each exposing ``register(app)``. May import every other package;
nothing in dshctl imports it (``__main__`` and the console script excepted).
"""
