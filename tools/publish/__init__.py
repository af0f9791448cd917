"""From scene to published files: render, verify, join chapters, keep the manifest, write the embed kit."""
