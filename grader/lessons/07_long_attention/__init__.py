"""Lesson 07_long_attention: its reference (reference.py) and its exercises (exercises.py)."""
