"""Hand-made word vectors for lesson 02's "context changes meaning" demo.

Each word has four features::

    [meaning x, meaning y, ambiguous, content]

The first two place a word in a plane of meanings, where three directions stand for
three senses of "mole": the animal, the chemistry unit and the spot on the skin. "mole"
itself sits at the origin, equally far from all three, and is the only word marked
ambiguous. Content words carry a meaning; function words ("the", "of") carry none.

The projections are chosen by hand, the way training would find them:

* ``W_Q`` turns "I am ambiguous" into the query "I am looking for content words";
* ``W_K`` turns "I am a content word" into a key that answers it (and keeps an ambiguous
  word from answering its own question);
* ``W_V`` passes on only the meaning, so the output of attention is a meaning.
"""
from __future__ import annotations

import numpy as np

FEATURES = ("meaning x", "meaning y", "ambiguous", "content")

MEANINGS = {
    "animal": np.array([0.0, 1.0]),
    "chemistry": np.array([-np.sqrt(3) / 2, -0.5]),
    "skin": np.array([np.sqrt(3) / 2, -0.5]),
}

# word -> (sense, how strongly it points that way)
CONTENT_WORDS = {
    "dug": ("animal", 0.5),
    "tunnel": ("animal", 0.75),
    "garden": ("animal", 1.0),
    "carbon": ("chemistry", 1.0),
    "atoms": ("chemistry", 0.7),
    "doctor": ("skin", 0.7),
    "checked": ("skin", 0.45),
    "skin": ("skin", 1.0),
}
FUNCTION_WORDS = ("the", "a", "of", "one", "on", "her", "under")

SENTENCES = {
    "animal": "the mole dug a tunnel under the garden",
    "chemistry": "one mole of carbon atoms",
    "skin": "the doctor checked the mole on her skin",
}

W_Q = np.array([[0.0], [0.0], [2.0], [0.0]])     # query: "ambiguous" -> look for content
W_K = np.array([[0.0], [0.0], [-2.0], [2.0]])    # key: content, unless ambiguous itself
W_V = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])  # value: the meaning


def embedding(word: str) -> np.ndarray:
    """The four features of ``word``; a ``ValueError`` names words it does not know."""
    if word == "mole":
        return np.array([0.0, 0.0, 1.0, 1.0])
    if word in CONTENT_WORDS:
        sense, strength = CONTENT_WORDS[word]
        return np.concatenate([strength * MEANINGS[sense], [0.0, 1.0]])
    if word in FUNCTION_WORDS:
        return np.zeros(4)
    known = ", ".join(sorted(["mole", *CONTENT_WORDS, *FUNCTION_WORDS]))
    raise ValueError(f"no hand-made embedding for {word!r}; known words: {known}")


def embed(sentence: str) -> tuple[list[str], np.ndarray]:
    """The tokens of ``sentence`` (split on spaces) and their vectors, ``[T, 4]``."""
    tokens = sentence.split()
    return tokens, np.stack([embedding(t) for t in tokens])


def content_points() -> dict[str, tuple[str, np.ndarray]]:
    """Each content word's sense and its place in the meaning plane, for plotting."""
    return {word: (sense, strength * MEANINGS[sense]) for word, (sense, strength) in CONTENT_WORDS.items()}


def closest_sense(point) -> str:
    """The sense whose direction ``point`` (in the meaning plane) leans towards most."""
    point = np.asarray(point, dtype=float)
    return max(MEANINGS, key=lambda sense: float(MEANINGS[sense] @ point))
