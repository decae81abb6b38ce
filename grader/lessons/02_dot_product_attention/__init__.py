"""Lesson 02_dot_product_attention: its reference (reference.py) and its exercises (exercises.py)."""
