"""The board's columns, defined once: what each column is called, what it shows of a row, how it sorts and when
it is shown. The terminal, Markdown and HTML renderers (and the plot's bar labels) read these definitions, so
they agree on the columns of every table, and a new column is one :class:`Column` in :data:`COLUMNS`.

A column is shown per table (one release build's entries, or one provenance of them): the provenance column
where that table's entries carry the loader's mark, the model column where some entry has a detail, the model
and cost columns (parameters, embedding size, max tokens, stated cut-off, base model, licence, throughput,
peak memory) where some entry states them
(``model_meta``; one hardware class at a time: :func:`.board_cost.on_hardware`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.board.cells import (
    FEW_MARK,
    FEW_QUERIES,
    SUBMITTER_STATED,
    entry_detail,
    provenance_text,
    query_count,
    relation_figures,
    split_text,
)
from ratio_bench.evaluation.board.ranks import Rank
from ratio_bench.evaluation.entry.record import Entry, ModelMeta, Withheld
from ratio_bench.evaluation.scoring.results import TABLE_METRICS

MAIN, RELATION = "main", "relation"  # the release's table; a relation's own ranking


@dataclass(frozen=True)
class Row:
    """One line of a table: the entry and its rank within its split."""

    rank: Rank
    entry: Entry


def _always(entries: Sequence[Entry]) -> bool:
    return True


@dataclass(frozen=True)
class Column:
    """One column: ``name`` (a stable key, the HTML filter's), ``header``, ``text`` (plain text; each renderer
    escapes it), ``value`` (a number for sorting, None for a text column), ``shown`` (given the table's entries),
    ``tables`` (the main table, the per-relation ones), ``relation`` (the relation the column belongs to)."""

    name: str
    header: str
    text: Callable[[Row], str]
    value: Callable[[Row], float | None] | None = None
    shown: Callable[[Sequence[Entry]], bool] = _always
    tables: tuple[str, ...] = (MAIN, RELATION)
    relation: str | None = None
    in_label: bool = False  # also named on the plot's bar label, after the row's name
    escaped: bool = True  # False only for text we build from numbers (a rank's "=3" stays as it is)

    @property
    def numeric(self) -> bool:
        return self.value is not None


def _meta(entry: Entry) -> ModelMeta:
    return entry.model_meta or ModelMeta()


def _stated(field: str) -> Callable[[Sequence[Entry]], bool]:
    """Shown when some entry of the table states ``model_meta.<field>``."""
    return lambda entries: any(getattr(_meta(e), field) is not None for e in entries)


def _count(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:,.0f}{unit}"


def _parameters(value: int | None) -> str:
    if value is None:
        return "-"
    return f"{value / 1e9:.1f}B" if value >= 1e9 else f"{value / 1e6:.0f}M"


def _stated_column(field: str, header: str, count: bool = False) -> Column:
    """A main-table column showing ``model_meta.<field>`` (named after it), where some entry states it: a count
    (sortable, with thousands separators) or a text (the card's or the submitter's words, escaped by each
    renderer)."""

    def get(r: Row):
        return getattr(_meta(r.entry), field)

    text = (lambda r: _count(get(r))) if count else (lambda r: _whose(r.entry, field, get(r)) or "-")
    return Column(field, header, text, value=get if count else None, shown=_stated(field), tables=(MAIN,))


def _whose(entry: Entry, field: str, value: str | None) -> str | None:
    """A cut-off the submitter typed, said to be theirs (nobody checked it): ``1900-01-01 (submitter's claim)``."""
    source = entry.training_data_cutoff_source or ""
    if value and field == "training_cutoff" and source.startswith(SUBMITTER_STATED):
        return f"{value} (submitter's claim)"
    return value


def _throughput(entry: Entry) -> str:
    meta = _meta(entry)
    if meta.throughput_texts_per_s is None:
        return "-"
    return _count(meta.throughput_texts_per_s) + (f" ({meta.hardware})" if meta.hardware else "")


def shown_withheld(entry: Entry) -> Withheld | None:
    """An entry's withheld figures as the board shows them: a verified entry's only (a self-reported one cannot
    have been scored on a split nobody outside custody holds, so its block is never shown or ranked)."""
    return entry.withheld if entry.status == "verified" else None


def _withheld_text(entry: Entry) -> str:
    held = shown_withheld(entry)
    if held is None:
        return "-"
    n = sum(held.n_queries.values())
    few = FEW_MARK if min(held.n_queries.values()) < FEW_QUERIES else ""  # as every other figure is marked
    lows, highs = zip(*held.interval.values(), strict=True)
    bounds = (
        f" [{100 * sum(lows) / len(lows):.1f}-{100 * sum(highs) / len(highs):.1f}]" if len(lows) == 1 else ""
    )
    return f"{100 * held.mean_score:.1f}{few}{bounds} (n={n}, {held.split})"


def withheld_rows(entries: Sequence[Entry]) -> list[Row]:
    """The withheld view: the verified entries scored on the withheld split, ranked by its MRR@10 (mean over its
    relations), one place per row (no paired test: the per-query ranks stay in custody)."""
    held = sorted(
        (e for e in entries if shown_withheld(e)), key=lambda e: (-shown_withheld(e).mean_score, e.label)
    )
    return [Row(Rank(i), e) for i, e in enumerate(held, 1)]


WITHHELD_NOTE = (
    "withheld: MRR@10 (%) on the newest snapshot, withheld from the public release and scored only by the "
    "leaderboard's workers (verified entries; aggregate figures, the interval a 95% bootstrap over its queries); "
    f"reproducible by anyone once the split is released (ratio dataset release-withheld); {FEW_MARK}: a "
    f"relation of fewer than {FEW_QUERIES} queries."
)


COLUMNS: tuple[Column, ...] = (
    Column("rank", "#", lambda r: str(r.rank), value=lambda r: r.rank.position, escaped=False),
    Column("model_setup", "model setup", lambda r: r.entry.label),
    Column(
        "model", "model", lambda r: entry_detail(r.entry), shown=lambda es: any(entry_detail(e) for e in es)
    ),
    Column("split", "split", lambda r: split_text(r.entry)),  # a bar panel is one split: titled, not labelled
    Column(
        "provenance",
        "provenance",
        lambda r: provenance_text(r.entry) or "",
        shown=lambda es: any(e.provenance is not None for e in es),
        tables=(MAIN,),
    ),
    Column(
        "parameters",
        "params",
        lambda r: _parameters(_meta(r.entry).parameters),
        value=lambda r: _meta(r.entry).parameters,
        shown=_stated("parameters"),
        tables=(MAIN,),
        in_label=True,
    ),
    _stated_column("embedding_dim", "dim", count=True),
    _stated_column("max_tokens", "max tokens", count=True),
    _stated_column("training_cutoff", "cut-off"),
    _stated_column("base_model", "base model"),
    _stated_column("license", "licence"),
    Column(
        "throughput",
        "texts/s (hardware)",
        lambda r: _throughput(r.entry),
        value=lambda r: _meta(r.entry).throughput_texts_per_s,
        shown=_stated("throughput_texts_per_s"),
        tables=(MAIN,),
        in_label=True,
    ),
    Column(
        "withheld",
        "withheld M@10",
        lambda r: _withheld_text(r.entry),
        value=lambda r: held.mean_score if (held := shown_withheld(r.entry)) else None,
        shown=lambda es: any(shown_withheld(e) for e in es),
        tables=(MAIN,),
    ),
    Column(
        "peak_memory",
        "peak MB",
        lambda r: _count(_meta(r.entry).peak_memory_mb),
        value=lambda r: _meta(r.entry).peak_memory_mb,
        shown=_stated("peak_memory_mb"),
        tables=(MAIN,),
    ),
)


def figure_columns(relation: str, short: bool) -> list[Column]:
    """A relation's columns: ``n`` (its queries), then its figures with their bootstrap intervals; headed
    ``address M@10`` in the main table, ``M@10`` in the relation's own."""
    n = Column(
        f"{relation}_n",
        "n" if short else f"{relation} n",
        lambda r: _count(query_count(r.entry, relation)),
        value=lambda r: query_count(r.entry, relation),
        relation=relation,
    )

    def column(i: int, key: str, label: str) -> Column:
        return Column(
            f"{relation}_{key}",
            label if short else f"{relation} {label}",
            lambda r: relation_figures(r.entry, relation)[i],
            value=lambda r: r.entry.score(relation, key),
            relation=relation,
        )

    return [n] + [column(i, key, label) for i, (key, label) in enumerate(TABLE_METRICS)]


def columns(entries: Sequence[Entry], relation: str | None = None) -> list[Column]:
    """The columns of one table: the main table of ``entries`` (``relation`` None), or ``relation``'s ranking;
    each column only where it is shown for these entries."""
    table = MAIN if relation is None else RELATION
    shown = [c for c in COLUMNS if table in c.tables and c.shown(entries)]
    figures = [c for rel in RELATIONS for c in figure_columns(rel, False)] if relation is None else []
    return shown + (figures or figure_columns(relation or "", True))


def cells(row: Row, shown: Sequence[Column]) -> list[str]:
    return [c.text(row) for c in shown]


WITHHELD_COLUMNS: tuple[Column, ...] = tuple(
    c for c in COLUMNS if c.name in ("rank", "model_setup", "withheld")
)
"""The withheld view's columns, in every renderer."""


def bar_label(row: Row, shown: Sequence[Column]) -> str:
    """A plot's bar label: ``3. name (split, ...)``, the row's name and its shown label columns."""
    extra = [t for c in shown if c.in_label and (t := c.text(row)) not in ("", "-")]
    return f"{row.rank}. {row.entry.label}" + (f" ({', '.join(extra)})" if extra else "")
