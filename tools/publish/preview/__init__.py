"""Looking at what is made: ``lecture preview`` (a figure's stills at every cue on each save, then its draft)
and ``lecture frames`` (stills and contact sheets of published clips)."""
