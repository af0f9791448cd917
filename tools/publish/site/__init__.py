"""The course site written from the manifest (pages from the Jinja2 templates in ``templates/``, the search
index, the published files linked in), and the local server that shows it."""
