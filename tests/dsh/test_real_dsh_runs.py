"""The reference itself: the set-up gives a dsh that reports its release and boots a profile."""
from __future__ import annotations


def test_the_reference_is_dsh_0_1_1_rc_2(real_dsh, tmp_path):
    done = real_dsh.run(tmp_path, "--version", check=True)
    assert done.stdout.strip() == "0.1.1-rc.2"


def test_the_reference_dumps_its_headless_profile(real_dsh, tmp_path):
    done = real_dsh.run(tmp_path, "--profile", "headless", "--dump-config", check=True)
    assert done.stdout.startswith("# == @deepseek-ai/dsh-base\n- id: timer\n")
    assert (tmp_path / "profiles" / "headless" / "pnpm-workspace.yaml").is_file()
