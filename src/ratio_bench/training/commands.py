"""The handlers of the ``training`` commands (``ratio_bench.training.cli`` builds their parsers and names these
handlers as strings; ``cli.handler`` imports this module when one of them runs, so ``--help`` and argument errors
load none of the libraries below)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ratio_bench.core import extras
from ratio_bench.core.extras import require
from ratio_bench.core.resources import preset, preset_dir
from ratio_bench.dataset.hub_release import open_release, release_folder
from ratio_bench.training import adapters
from ratio_bench.training.card import write_card
from ratio_bench.training.config import NOT_FINE_TUNING, load_config
from ratio_bench.training.publish import publish_models


def _run():
    """``training/run.py``, loaded once a command's config and folders have been checked: it imports the training
    stack (transformers' Trainer, which needs the train extra's accelerate, and torch), about 5 s, which a
    mistyped config must not wait for."""
    return extras.load("ratio_bench.training.run")


def cmd_train(args: argparse.Namespace) -> int:
    require("train")
    # A mistyped config or release folder fails in a fraction of a second, before torch is imported (~8 s).
    config = load_config(preset("training", args.config))
    args.dataset = release_folder(args.dataset)

    summary = _run().train(
        config,
        args.dataset,
        args.out,
        args.trial,
        args.trust_remote_code,
        show_progress=not args.quiet,
    )
    if not summary:  # a non-main DDP process: rank 0 writes every output
        return 0

    chosen = summary["chosen"]
    card = write_card(args.out)
    print(
        f"{summary['config']['file']}: trial {chosen['trial']} chosen ({chosen['reason']}) -> {args.out}/best "
        f"(card {card})"
    )
    return 0


def cmd_train_all(args: argparse.Namespace) -> int:

    # a wrong --dir is refused before the training stack's imports (about 5 s)
    folder = preset_dir("training", args.dir, top="spec", other=NOT_FINE_TUNING)
    require("train")

    args.dataset = release_folder(args.dataset)

    for summary in _run().train_all(
        folder,
        args.dataset,
        args.out,
        args.trust_remote_code,
        show_progress=not args.quiet,
    ):
        if not summary:
            continue
        chosen = summary["chosen"]
        write_card(args.out / Path(summary["config"]["file"]).stem)
        print(
            f"{summary['config']['file']}: trial {chosen['trial']}, validation MRR@10 {chosen['mrr_at_10']:.4f}"
        )
    return 0


def cmd_train_adapters(args: argparse.Namespace) -> int:
    config = adapters.load_config(preset("training", args.config))
    release = open_release(args.dataset)
    encode = adapters.encoder_for(config.base, args.cache_dir, args.batch_size)
    trained, choices = adapters.train_adapters(config, release, encode)
    lexical = adapters.choose_lexical(config, release, encode, trained)
    weights = adapters.write_outputs(args.out, config, release, trained, choices, lexical)
    for line in adapters.describe(choices, lexical):
        print(line)
    print(f"{config.file}: query adapters -> {weights} (summary {args.out / adapters.SUMMARY})")
    return 0


def cmd_model_card(args: argparse.Namespace) -> int:
    print(write_card(args.dir, args.results, args.repo_id, args.dataset))
    return 0


def cmd_publish_models(args: argparse.Namespace) -> int:
    for line in publish_models(args.dir, args.org, args.revision, args.private, args.force, args.dataset):
        print(f"published {line}")
    return 0
