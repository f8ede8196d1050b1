"""Relation-specific contrastive fine-tuning of dense retrievers (spec 5.1 and appendix C).

One YAML file per setup (backbone x prompt setup x relation) lists its trials; ``ratio train`` runs them on
sentence-transformers' trainer with in-batch negatives, keeps each trial's best epoch by validation MRR@10
(the leaderboard's own metric code over the validation partition's full shared corpus), keeps the best trial
and never reads the test split.
"""
