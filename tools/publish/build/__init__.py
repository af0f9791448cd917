"""``lecture build``: the checks, then one plan (what happens to each figure, chapter video and the site, and
why), then the stages that carry it out; and ``lecture clean``, which removes what nothing refers to."""
