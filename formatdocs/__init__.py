"""Format documentation that needs the generated codecs: annotated examples and the HTML site."""
