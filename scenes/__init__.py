"""Manim scenes, one file per chapter; ``style``, ``widgets`` and ``base`` are shared by all."""
