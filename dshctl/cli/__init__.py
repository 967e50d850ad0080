"""The command line: a thin layer that parses arguments and renders results."""
