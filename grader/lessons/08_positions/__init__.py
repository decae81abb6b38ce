"""Lesson 08_positions: its reference (reference.py) and its exercises (exercises.py)."""
