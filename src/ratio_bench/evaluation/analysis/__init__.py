"""The paper's analyses over scored runs and entries: move sensitivity, drift over test snapshots, the mined-role
precision of typed hits, the spec's tables, and :mod:`.run`, which the ``ratio analyze`` commands call."""
