"""What a figure's published files depend on, and its render key made of it: the figure's own scene source, the
fonts that draw its text, the locked libraries and numpy's SIMD paths, its facts, cues and settings."""
