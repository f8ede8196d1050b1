"""Per-paper extraction: consecutive sentence pairs whose second sentence opens with a lexicon marker."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from ratio_bench.corpus.cleaning import Cleaner, is_too_short
from ratio_bench.corpus.pipeline import SegmentedPaper
from ratio_bench.io import RejectLog
from ratio_bench.lexicon import Lexicon


@dataclass
class MiningCounts:
    """Counters of one mining run (summed across tasks into ``stats.json``)."""

    tuples: Counter[str] = field(default_factory=Counter)
    distractors: Counter[str] = field(default_factory=Counter)
    marker_fired: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    marker_kept: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    by_source: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    by_section: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    rejects: Counter[str] = field(default_factory=Counter)
    sentence_pairs: int = 0

    def as_dict(self) -> dict[str, Any]:
        def nested(d: dict[str, Counter[str]]) -> dict[str, dict[str, int]]:
            return {k: dict(sorted(v.items())) for k, v in sorted(d.items())}

        return {
            "tuples": dict(sorted(self.tuples.items())),
            "distractors": dict(sorted(self.distractors.items())),
            "marker_fired": nested(self.marker_fired),
            "marker_kept": nested(self.marker_kept),
            "by_source": nested(self.by_source),
            "by_section": nested(self.by_section),
            "rejects": dict(sorted(self.rejects.items())),
            "sentence_pairs": self.sentence_pairs,
        }


class PairMiner:
    """Turns one segmented paper into pair rows and distractor rows (plain dicts in schema order)."""

    def __init__(self, lexicon: Lexicon, cleaner: Cleaner, keep_case: bool = False):
        self.lexicon = lexicon
        self.cleaner = cleaner
        self.keep_case = keep_case

    def _reject(self, counts: MiningCounts, rejects: RejectLog, paper_id: str, source: str, reason: str,
                **extra: Any) -> None:
        counts.rejects[reason] += 1
        rejects.add(source, paper_id, reason, **extra)

    def mine(self, seg: SegmentedPaper, pairs: list[dict[str, Any]], distractors: list[dict[str, Any]],
             counts: MiningCounts, rejects: RejectLog) -> None:
        paper = seg.paper
        match = self.lexicon.match
        prov_base: dict[str, Any] | None = None
        for p_idx, (para, sentences) in enumerate(zip(paper.paragraphs, seg.sentences)):
            counts.sentence_pairs += max(0, len(sentences) - 1)
            for s_idx, sentence in enumerate(sentences):
                m = match(sentence)
                if m is None:
                    continue
                counts.marker_fired[m.label][m.marker] += 1
                if prov_base is None:
                    prov_base = _paper_provenance(paper)
                where = {"marker": m.marker, "paragraph_index": p_idx, "sentence_index": s_idx}
                if m.is_target:
                    if s_idx == 0:
                        self._reject(counts, rejects, paper.paper_id, paper.source_file,
                                     "marker_at_paragraph_start", **where)
                        continue
                    cleaned = self.cleaner.clean_pair(sentences[s_idx - 1], sentence[m.end:])
                    if isinstance(cleaned, str):
                        self._reject(counts, rejects, paper.paper_id, paper.source_file, cleaned, **where)
                        continue
                    counts.tuples[m.label] += 1
                    counts.marker_kept[m.label][m.marker] += 1
                    counts.by_source[paper.source_file][m.label] += 1
                    counts.by_section[para.category.value][m.label] += 1
                    pairs.append({
                        "relation": m.label,
                        "query": cleaned.query,
                        "gold": cleaned.gold,
                        "marker": m.marker,
                        "marker_stage": m.stage,
                        "query_clause": cleaned.query_clause,
                        "query_cased": cleaned.query_cased if self.keep_case else None,
                        "gold_cased": cleaned.gold_cased if self.keep_case else None,
                        **prov_base,
                        "section": para.section,
                        "section_category": para.category.value,
                        "paragraph_index": p_idx,
                        "sentence_index": s_idx - 1,
                    })
                else:
                    cased = self.cleaner.clean_gold(sentence[m.end:])
                    if is_too_short(cased, self.cleaner.min_chars):
                        self._reject(counts, rejects, paper.paper_id, paper.source_file, "short_distractor",
                                     **where)
                        continue
                    counts.distractors[m.label] += 1
                    counts.marker_kept[m.label][m.marker] += 1
                    counts.by_source[paper.source_file][m.label] += 1
                    counts.by_section[para.category.value][m.label] += 1
                    distractors.append({
                        "category": m.label,
                        "text": self.cleaner.normalise(cased),
                        "marker": m.marker,
                        "marker_stage": m.stage,
                        "text_cased": cased if self.keep_case else None,
                        **prov_base,
                        "section": para.section,
                        "section_category": para.category.value,
                        "paragraph_index": p_idx,
                        "sentence_index": s_idx,
                    })


def _paper_provenance(paper) -> dict[str, Any]:
    d = paper.date
    return {
        "paper_id": paper.paper_id,
        "source": paper.source,
        "source_file": paper.source_file,
        "venue": paper.venue,
        "kind": paper.kind,
        "date_raw": d.raw,
        "date_start": d.start,
        "date_end": d.end,
        "date_precision": d.precision.value,
        "fields_of_study": paper.fields_of_study,
    }
