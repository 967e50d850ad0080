"""docs/rules.md, generated from the rule registry (SARIF's helpUri points into it).

Regenerate with ``python -m dshctl.report.rulesdoc > docs/rules.md``; a test keeps it current.
"""
from __future__ import annotations


def render() -> str:
    from dshctl.lint import all_rules

    out = ["# Lint rules", "",
           "Generated from the rule registry by `python -m dshctl.report.rulesdoc`; "
           "`dshctl lint --list-rules` prints the same with the levels in force under your config "
           "([cli.md](cli.md#configuring-dshctl-lint)).", ""]
    for r in all_rules():
        fence = "json" if r.example_file.endswith(".json") else "yaml"
        out += [f"## {r.id}", "", f"Default level: **{r.level}**. Kinds: {', '.join(sorted(r.kinds))}.", "",
                r.doc, "", f"Passes (`{r.example_file}`):", "", f"```{fence}", r.good.rstrip("\n"), "```", "",
                f"Fails (`{r.example_file}`):", "", f"```{fence}", r.bad.rstrip("\n"), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render(), end="")
