"""dshctl: toolchain and embedded host for the dsh / Cordis configuration model.

Top level: ``errors`` (DshctlError, Loc, exit codes) and ``terminal`` (colour detection), which any
layer may import; then ``core`` (pure) < ``runtime``/``lint``/``bundles`` < ``loader``/``report`` <
``host`` < ``cli``. Imports only point down (docs/architecture.md; tests/test_architecture.py).
"""

__version__ = "0.1.0"
# Where the project lives (pyproject's [project.urls] Homepage; SARIF's informationUri and helpUri).
PROJECT_URL = "https://github.com/dshctl/dshctl"
