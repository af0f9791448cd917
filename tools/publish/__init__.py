"""Turning checked figures into published clips, chapter videos and the course site, in subpackages by role.

From the bottom up (each may import only those below it; tests/test_layers.py keeps it so):

- ``rendering``: running manim on a figure, its work folders and time limits, the queue of renders, a
  figure cut in two for an idle core, renders on a Dask cluster, and what the render server's forks keep;
- ``publishing``: what a render becomes in renders/<quality>/: the web MP4 and its files, the chapter videos,
  the manifest and the sidecars;
- ``site``: the course site written from the manifest, and the local server that shows it;
- ``keys``: what a figure's output depends on (its scene source, the fonts, the stack) and its render key;
- ``checks``: everything checked before anything renders, the layout lint and its stills among them;
- ``build``: ``lecture build``: the checks, then the plan (what happens to each figure and why), then the
  stages that carry it out; ``lecture clean``;
- ``preview``: looking at what is made: ``lecture preview`` (a figure's stills on every save, then its
  draft) and ``lecture frames`` (stills and contact sheets of published clips).
"""
