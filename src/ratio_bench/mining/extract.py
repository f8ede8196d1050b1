"""Per-paper extraction: consecutive sentence pairs whose second sentence opens with a lexicon marker."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from ratio_bench.core.io import RejectLog
from ratio_bench.core.relations import RELATIONS
from ratio_bench.corpus.cleaning import Cleaner
from ratio_bench.corpus.records import Paper
from ratio_bench.corpus.segmentation import sentence_spans
from ratio_bench.lexicon import Lexicon
from ratio_bench.mining.schema import PAPER_PROVENANCE


@dataclass
class MiningCounts:
    """Counters of one mining run (summed across tasks into ``stats.json``).

    The hot loop updates two flat counters keyed by tuples; :meth:`as_dict` derives the per-relation,
    per-marker, per-source and per-section views from them once per task.
    """

    # (label, entry) -> sentences the entry opened; an entry is a marker, or "<prefix> …" for a connective rule,
    # so a connective counts once, as in the paper's Table 2
    fired: Counter[tuple[str, str]] = field(default_factory=Counter)
    # (label, entry, source_file, section_category) -> rows kept
    kept: Counter[tuple[str, str, str, str]] = field(default_factory=Counter)
    rejects: Counter[str] = field(default_factory=Counter)
    sentence_pairs: int = 0

    def as_dict(self) -> dict[str, Any]:
        tuples: Counter[str] = Counter()
        distractors: Counter[str] = Counter()
        fired: dict[str, Counter[str]] = defaultdict(Counter)
        kept: dict[str, Counter[str]] = defaultdict(Counter)
        by_source: dict[str, Counter[str]] = defaultdict(Counter)
        by_section: dict[str, Counter[str]] = defaultdict(Counter)
        for (label, entry), n in self.fired.items():
            fired[label][entry] += n
        for (label, entry, source, section), n in self.kept.items():
            (tuples if label in RELATIONS else distractors)[label] += n
            kept[label][entry] += n
            by_source[source][label] += n
            by_section[section][label] += n

        def nested(d: dict[str, Counter[str]]) -> dict[str, dict[str, int]]:
            return {k: dict(sorted(v.items())) for k, v in sorted(d.items())}

        return {
            "tuples": dict(sorted(tuples.items())),
            "distractors": dict(sorted(distractors.items())),
            "marker_fired": nested(fired),
            "marker_kept": nested(kept),
            "by_source": nested(by_source),
            "by_section": nested(by_section),
            "rejects": dict(sorted(self.rejects.items())),
            "sentence_pairs": self.sentence_pairs,
        }


class PairMiner:
    """Turns one segmented paper into pair rows and distractor rows (plain dicts in schema order)."""

    def __init__(self, lexicon: Lexicon, cleaner: Cleaner, keep_case: bool = False):
        self.lexicon = lexicon
        self.cleaner = cleaner
        self.keep_case = keep_case

    def mine_paper(
        self,
        paper: Paper,
        pairs: list[dict[str, Any]],
        distractors: list[dict[str, Any]],
        counts: MiningCounts,
        rejects: RejectLog,
    ) -> int:
        """Segment and mine a paper in one pass; returns its number of sentences.

        Sentences stay offsets into their paragraph: only the few that open with a marker, and the sentence
        before each, are ever sliced out (the corpus stage's ``segment`` would build every sentence string).
        """
        texts = [p.text for p in paper.paragraphs]
        spans = [sentence_spans(t) for t in texts]
        self._mine(paper, texts, spans, pairs, distractors, counts, rejects)
        return sum(map(len, spans))

    def _mine(
        self,
        paper: Paper,
        texts: list[str],
        spans: list[list[tuple[int, int]]],
        pairs: list[dict[str, Any]],
        distractors: list[dict[str, Any]],
        counts: MiningCounts,
        rejects: RejectLog,
    ) -> None:
        match_at = self.lexicon.match_at
        cleaner = self.cleaner
        keep_case = self.keep_case
        source = paper.source_file
        prov: dict[str, Any] | None = None
        n_pairs = 0
        for p_idx, (para, text, offsets) in enumerate(zip(paper.paragraphs, texts, spans, strict=True)):
            if offsets:
                n_pairs += len(offsets) - 1
            category: str | None = None
            for s_idx, (a, b) in enumerate(offsets):
                m = match_at(text, a, b)
                if m is None:
                    continue
                counts.fired[m.label, m.entry] += 1
                if prov is None:
                    prov = _paper_provenance(paper)
                if category is None:
                    category = para.category.value
                if m.label in RELATIONS:
                    if s_idx == 0:
                        self._reject(
                            counts, rejects, paper, "marker_at_paragraph_start", m.marker, p_idx, s_idx
                        )
                        continue
                    qa, qb = offsets[s_idx - 1]
                    cleaned = cleaner.clean_pair(text[qa:qb], text[a + m.end : b])
                    if isinstance(cleaned, str):
                        self._reject(counts, rejects, paper, cleaned, m.marker, p_idx, s_idx)
                        continue
                    counts.kept[m.label, m.entry, source, category] += 1
                    pairs.append(
                        {
                            "relation": m.label,
                            "query": cleaned.query,
                            "gold": cleaned.gold,
                            "marker": m.marker,
                            "marker_stage": m.stage,
                            "query_clause": cleaned.query_clause,
                            "query_cased": cleaned.query_cased if keep_case else None,
                            "gold_cased": cleaned.gold_cased if keep_case else None,
                            **prov,
                            "section": para.section,
                            "section_category": category,
                            "paragraph_index": p_idx,
                            "sentence_index": s_idx - 1,
                        }
                    )
                else:
                    cased = cleaner.clean_gold(text[a + m.end : b])
                    if len(cased) < cleaner.min_chars:
                        self._reject(counts, rejects, paper, "short_distractor", m.marker, p_idx, s_idx)
                        continue
                    counts.kept[m.label, m.entry, source, category] += 1
                    distractors.append(
                        {
                            "category": m.label,
                            "text": cleaner.normalise(cased),
                            "marker": m.marker,
                            "marker_stage": m.stage,
                            "text_cased": cased if keep_case else None,
                            **prov,
                            "section": para.section,
                            "section_category": category,
                            "paragraph_index": p_idx,
                            "sentence_index": s_idx,
                        }
                    )
        counts.sentence_pairs += n_pairs

    @staticmethod
    def _reject(
        counts: MiningCounts,
        rejects: RejectLog,
        paper: Paper,
        reason: str,
        marker: str,
        p_idx: int,
        s_idx: int,
    ) -> None:
        counts.rejects[reason] += 1
        rejects.add(
            paper.source_file,
            paper.paper_id,
            reason,
            marker=marker,
            paragraph_index=p_idx,
            sentence_index=s_idx,
        )


def _paper_provenance(paper: Paper) -> dict[str, Any]:
    meta = paper.metadata()
    return {k: meta[k] for k in PAPER_PROVENANCE}
