"""Lesson 09_tiny_gpt: its reference (reference.py), its exercises (exercises.py) and the learner's side (learner.py)."""
