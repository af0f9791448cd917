"""Running manim on one figure: its process (forked from a server that imported manim once), work folder, time
limit and outputs; the queue of renders, longest first; a figure cut in two for an idle core; renders on a Dask
cluster; the live progress; and what the render server's forks keep (copies, parsed texts, 3-D shading)."""
