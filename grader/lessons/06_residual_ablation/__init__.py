"""Lesson 06_residual_ablation: its reference (reference.py) and its exercises (exercises.py)."""
