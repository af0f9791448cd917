"""Everything checked before anything renders, one list of named steps for ``lecture check`` and ``lecture
build``: the facts, the cues and their readings, the glyphs, the pacing, and the layout lint with its stills."""
