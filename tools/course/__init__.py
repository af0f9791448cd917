"""The course: its chapters and figures (the catalogue), checked facts, and how numbers look and sound."""
