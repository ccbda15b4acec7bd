"""The plan of each generated module: its classes and the bodies of their methods (read, write, columnar), as lines the templates lay out."""
