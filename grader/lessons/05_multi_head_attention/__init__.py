"""Lesson 05_multi_head_attention: its reference (reference.py) and its exercises (exercises.py)."""
