"""Ranked full-text search over what happened in an episode: BM25 over an in-process index.

What one episode's document holds: its instruction, task and app; every step's model output
(``raw_output``) and thought; the UI text of its screens (``text`` and ``content-desc`` of the
UI tree's nodes); and the notes of its annotations.

Words: lowercase runs of letters and digits; runs of Chinese characters go through jieba's
search mode (``无线网络`` -> 无线, 网络, 无线网络, ...), the same on documents and queries, so a
Chinese query finds a Chinese instruction without spaces. A query matches an episode when every
query word occurs in its document; matches are ranked by BM25 (k1=1.2, b=0.75), as DuckDB's
``fts`` extension ranks them.

Why not DuckDB's ``fts`` extension: the only offline build of it is the ``duckdb-ext-fts``
wheel, whose newest release is for DuckDB 1.4.4; DuckDB 2.0 refuses to load it ("built
specifically for DuckDB version 'v1.4.4'"), and ``INSTALL fts`` needs the internet. So the
index lives here, in memory, derived from the lake (never stored in it):

- ``SearchIndex.add(docs)`` indexes new episodes as one segment (raw data is append-only:
  an episode's steps never change, so a refresh indexes only episodes it has not seen);
- ``SearchIndex.set_notes(notes)`` replaces the notes segment (annotations come later);
- ``SearchIndex.search(q)`` -> (episode ids, scores), best first. Segments merge past 8.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections import Counter
from collections.abc import Iterable

import numpy as np

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
WORD = re.compile(f"[{_HAN}]+|[^\\W_{_HAN}]+")
CJK = re.compile(f"[{_HAN}]")
K1, B = 1.2, 0.75
MAX_SEGMENTS = 8
_jieba = None
_jieba_lock = threading.Lock()


def _segmenter():
    global _jieba
    with _jieba_lock:
        if _jieba is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            tokenizer = jieba.Tokenizer()
            tokenizer.initialize()
            _jieba = tokenizer
    return _jieba


def words(text: str | None) -> list[str]:
    """The index's words of ``text`` (module docstring)."""
    if not text:
        return []
    out: list[str] = []
    for run in WORD.findall(text.lower()):
        if CJK.match(run):
            out.extend(w for w in _segmenter().lcut_for_search(run) if w.strip())
        else:
            out.append(run)
    return out


class _Segment:
    """Postings of some documents: term -> (doc numbers, term frequencies)."""

    def __init__(self, postings: dict[str, tuple[np.ndarray, np.ndarray]]):
        self.postings = postings

    @classmethod
    def build(cls, docs: Iterable[tuple[int, list[str]]]) -> _Segment:
        grouped: dict[str, tuple[list[int], list[int]]] = {}
        for number, tokens in docs:
            for term, tf in Counter(tokens).items():
                ids, tfs = grouped.setdefault(term, ([], []))
                ids.append(number)
                tfs.append(tf)
        return cls({t: (np.asarray(d, dtype=np.int32), np.asarray(f, dtype=np.float32)) for t, (d, f) in grouped.items()})

    @classmethod
    def merge(cls, segments: list[_Segment]) -> _Segment:
        terms: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        for seg in segments:
            for term, pair in seg.postings.items():
                terms.setdefault(term, []).append(pair)
        return cls({t: (np.concatenate([d for d, _ in ps]), np.concatenate([f for _, f in ps]))
                    for t, ps in terms.items()})


class SearchIndex:
    def __init__(self):
        self.ids: list[str] = []
        self._number: dict[str, int] = {}
        self._lengths = np.zeros(0, dtype=np.float32)  # words per document, notes included
        self._note_lengths = np.zeros(0, dtype=np.float32)
        self._segments: list[_Segment] = []
        self._notes = _Segment({})

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, episode_id: str) -> bool:
        return episode_id in self._number

    def add(self, docs: Iterable[tuple[str, str]]) -> int:
        """Index ``(episode_id, text)`` pairs not indexed yet; returns how many were new."""
        fresh, lengths = [], []
        for episode_id, text in docs:
            if episode_id in self._number:
                continue
            number = len(self.ids)
            self._number[episode_id] = number
            self.ids.append(episode_id)
            tokens = words(text)
            fresh.append((number, tokens))
            lengths.append(len(tokens))
        if fresh:
            self._segments.append(_Segment.build(fresh))
            self._lengths = np.concatenate([self._lengths, np.asarray(lengths, dtype=np.float32)])
            self._note_lengths = np.concatenate([self._note_lengths, np.zeros(len(fresh), dtype=np.float32)])
            if len(self._segments) > MAX_SEGMENTS:
                self._segments = [_Segment.merge(self._segments)]
        return len(fresh)

    def set_notes(self, notes: dict[str, str]) -> None:
        """Replace the annotation notes (episode id -> all its notes); unknown episodes are skipped."""
        self._lengths = self._lengths - self._note_lengths
        self._note_lengths = np.zeros(len(self.ids), dtype=np.float32)
        docs = []
        for episode_id, text in notes.items():
            number = self._number.get(episode_id)
            if number is not None:
                tokens = words(text)
                docs.append((number, tokens))
                self._note_lengths[number] = len(tokens)
        self._lengths = self._lengths + self._note_lengths
        self._notes = _Segment.build(docs)

    def search(self, query: str) -> tuple[list[str], np.ndarray]:
        """Episodes whose document has every word of ``query``, best BM25 score first."""
        docs, scores = self.search_docs(query)
        return [self.ids[i] for i in docs], scores

    def search_docs(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """As ``search``, by document number (``ids[number]`` is the episode): no strings made."""
        terms = list(dict.fromkeys(words(query)))
        n = len(self.ids)
        none = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        if not terms or not n:
            return none
        postings = []
        for term in terms:
            pair = self._postings(term)
            if pair is None:
                return none
            postings.append(pair)
        postings.sort(key=lambda p: len(p[0]))  # intersect from the rarest word
        docs = postings[0][0]
        for other, _ in postings[1:]:
            docs = docs[np.isin(docs, other, assume_unique=True)]
            if not len(docs):
                return none
        avgdl = max(float(self._lengths.mean()), 1e-9)
        norm = K1 * (1 - B + B * self._lengths[docs] / avgdl)
        score = np.zeros(len(docs), dtype=np.float32)
        for term_docs, tfs in postings:
            df = len(term_docs)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = tfs[np.searchsorted(term_docs, docs)]
            score += (idf * tf * (K1 + 1) / (tf + norm)).astype(np.float32)
        order = np.argsort(-score, kind="stable")
        return docs[order], score[order]

    def _postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(sorted unique doc numbers, summed term frequencies) of ``term`` over every segment."""
        pairs = [seg.postings[term] for seg in (*self._segments, self._notes) if term in seg.postings]
        if not pairs:
            return None
        if len(pairs) == 1:
            return pairs[0]
        docs = np.concatenate([d for d, _ in pairs])
        tfs = np.concatenate([f for _, f in pairs])
        unique, inverse = np.unique(docs, return_inverse=True)
        return unique, np.bincount(inverse, weights=tfs).astype(np.float32)
