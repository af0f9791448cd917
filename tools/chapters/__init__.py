"""One module per chapter: its figures in page order and the facts each shows."""
