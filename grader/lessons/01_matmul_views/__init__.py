"""Lesson 01_matmul_views: its reference (reference.py) and its exercises (exercises.py)."""
