"""The leaderboard as a table: result files gathered into a ``Board`` (:mod:`.leaderboard`), ranks and ties,
each row's cells, the columns defined once (:mod:`.view`), the clean-snapshot ranking and cost columns; the
renderers (terminal, Markdown, HTML page, pictures) live in :mod:`.render`, one module per output."""
