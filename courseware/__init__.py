"""What the notebooks import to show, time and train: figures, widgets and toy tasks.

Graded logic lives in ``grader``; this package only helps the lessons teach.
"""
