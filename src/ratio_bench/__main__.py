"""``python -m ratio_bench``: with no arguments, check the install on one screen (versions, the torch build,
extras, models, a one-second self-test); with arguments, the ``ratio`` command, for environments whose scripts
folder is not on PATH."""

from __future__ import annotations

import sys

from ratio_bench.retrieval.install_check import check_install


def print_install_check() -> int:
    """The install report, one screen; exit 1 when the self-test fails (the install cannot score)."""

    report = check_install()
    print(f"Ratio install check (Python {report.python})")
    print("\nversions")
    for package in report.packages:
        shown = report.torch.describe() if package.name == "torch" else package.version or "not installed"
        print(f"  {package.name:<22} {shown}")
    print("\nextras")
    for extra in report.extras:
        state = (
            "present"
            if extra.present
            else f"missing {', '.join(extra.missing)}: pip install 'ratio-bench[{extra.name}]'"
        )
        print(f"  {extra.name:<22} {state}")
    print("\nmodels (ratio models; NAME[:SETUP] for --model)")
    for model in report.models:
        state = "available" if model.available else "unavailable"
        print(f"  {model.name:<22} {model.kind:<7} {state:<12} setups: {', '.join(model.setups)}")
    test = report.self_test
    print(f"\nself-test  {'passed' if test.passed else 'FAILED'} in {test.seconds:.2f} s: {test.detail}")
    if test.passed:
        print("next: ratio score --model bm25 --dataset RELEASE --split test (see README.md's quick starts)")
    return 0 if test.passed else 1


if __name__ == "__main__":
    if len(sys.argv) > 1:
        from ratio_bench.cli import run

        run()
    else:
        sys.exit(print_install_check())
