"""Export of confirmed or accepted findings as reports ready to file (Markdown or JSON) plus an index."""
