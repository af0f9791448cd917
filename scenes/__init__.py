"""Manim scenes, one file per chapter; ``style`` and ``base`` are shared by all."""
