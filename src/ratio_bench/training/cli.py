"""``ratio train`` and ``ratio train-all``."""

from __future__ import annotations

from pathlib import Path

from ratio_bench.core.options import add_release_option


def register(sub) -> None:
    stage = sub.add_parser("train", help="training stage: run, all, card, publish").add_subparsers(
        dest="train_command", required=True
    )
    p = stage.add_parser("run", help="fine-tune a retriever: every trial of one training config, best kept")
    p.add_argument(
        "--config",
        required=True,
        help="a training config file, or a shipped one by name (all-mpnet-base-v2-generic-address, "
        "dev/all-MiniLM-L6-v2-generic-address, ...)",
    )
    add_release_option(p, required=True)
    p.add_argument("--out", type=Path, required=True, help="output folder (best/, summary.json, trials/)")
    p.add_argument("--trial", type=int, default=None, metavar="K", help="run only trial K (0-based)")
    p.add_argument("--trust-remote-code", action="store_true", help="allow a model's own code to run")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func="ratio_bench.training.commands:cmd_train")

    p = stage.add_parser("all", help="every training config of a folder, resumable")
    p.add_argument(
        "--dir",
        required=True,
        help="a folder of training configs, or a shipped one: spec (the spec's setups), dev, dev/ablations",
    )
    add_release_option(p, required=True)
    p.add_argument("--out", type=Path, required=True, help="output folder: one subfolder per config")
    p.add_argument("--trust-remote-code", action="store_true", help="allow a model's own code to run")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func="ratio_bench.training.commands:cmd_train_all")

    p = stage.add_parser(
        "adapters", help="per-move query adapters on a frozen model (seconds once its vectors are cached)"
    )
    p.add_argument(
        "--config", required=True, help="an adapter config file, or a shipped one (adapters/all-MiniLM-L6-v2)"
    )
    add_release_option(p, " (its train and validation splits)", required=True)
    p.add_argument("--out", type=Path, required=True, help="output folder (<name>.safetensors, summary.json)")
    p.add_argument("--cache-dir", type=Path, help="embedding cache (default: ~/.cache/ratio/embeddings)")
    p.add_argument("--batch-size", type=int, default=64)
    p.set_defaults(func="ratio_bench.training.commands:cmd_train_adapters")

    p = stage.add_parser("card", help="(re-)render a tuned model's card: DIR/best/README.md")
    p.add_argument("dir", type=Path, metavar="DIR", help="a training output folder (ratio train --out)")
    p.add_argument(
        "--results",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="a `ratio score --out` result of DIR/best (test, silver); repeatable",
    )
    p.add_argument("--repo-id", help="the Hub repository shown in the usage example (default ORG/<name>)")
    p.add_argument(
        "--dataset", type=Path, help="the training release folder, when not where training recorded it"
    )
    p.set_defaults(func="ratio_bench.training.commands:cmd_model_card")

    p = stage.add_parser("publish", help="upload tuned models to Hugging Face Hub model repos and tag them")
    p.add_argument(
        "dir", type=Path, metavar="DIR", help="a training output folder, or a folder of them (models/dev)"
    )
    p.add_argument(
        "--org", required=True, help="Hub user or organisation: repos ORG/ratio-<relation>-<backbone>-<setup>"
    )
    p.add_argument("--revision", metavar="TAG", help="tag for the upload (default: the Ratio version)")
    p.add_argument("--private", action="store_true", help="create the repositories private")
    p.add_argument(
        "--force",
        action="store_true",
        help="publish even models of a release whose config says release.publish: false",
    )
    p.add_argument(
        "--dataset", type=Path, help="the training release folder, when not where training recorded it"
    )
    p.set_defaults(func="ratio_bench.training.commands:cmd_publish_models")
