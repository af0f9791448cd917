"""Narration: cue texts checked against the facts, speech engines, cue audio, captions."""
