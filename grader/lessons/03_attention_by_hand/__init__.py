"""Lesson 03_attention_by_hand: its reference (reference.py) and its exercises (exercises.py)."""
