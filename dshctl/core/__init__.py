"""The pure core: dialect, model, patching, composition, discovery. Nothing here prints."""
