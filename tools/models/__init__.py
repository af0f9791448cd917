"""The manim-free maths the figures stand on: circuits, descent, the byte ledger, bf16, LoRA, ZeRO, V3, recomputation.

Plain numbers and numpy only: nothing here knows about facts, figures or screens.
"""
