"""Test-wide settings.

Hypothesis explores new random examples on every developer run. Under CI (``CI`` set, as `.ci/run`
is run) it is derandomized so a landing is decided by the same examples every time, has no per-example
deadline (CI machines are shared and loaded), and prints a reproduction blob for any failure.
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
if os.environ.get("CI"):
    settings.load_profile("ci")
