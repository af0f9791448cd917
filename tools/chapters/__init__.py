"""One module per chapter: a builder per figure that computes its facts from tools.models and checks them."""
