"""The board's outputs, one module each: the terminal table, Markdown, the HTML page (its style and script in
:mod:`.page_assets`), the bar and trend pictures, and :mod:`.output`, which writes the ones a command asks for."""
