"""The schema compiler: its output, its diagnostics, the shapes it compiles, the format pages."""
