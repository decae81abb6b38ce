"""Lesson 04_masking: its reference (reference.py) and its exercises (exercises.py)."""
