"""What a render becomes in renders/<quality>/: a figure's web MP4, captions, poster, thumbnail and attachments,
the chapter videos joined from them, and the manifest with a sidecar record beside each item."""
